// The account and signing secret every test service is started with (service/start-service.ts),
// and every test client logs in with or forges tokens from (client/tokens.ts).
export const TEST_SECRET = 'test-secret-that-is-at-least-32-bytes-long!';
export const TEST_USERNAME = 'admin';
export const TEST_PASSWORD = 'password';
