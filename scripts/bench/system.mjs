// The machine's tools: whether a command exists, installing Debian packages with apt-get (only
// when running as root), and an installed package's version.
import { spawnSync } from 'node:child_process';
import process from 'node:process';

export function commandExists(command) {
  return spawnSync('sh', ['-c', `command -v ${command}`], { stdio: 'ignore' }).status === 0;
}

export function canAptInstall() {
  return process.getuid?.() === 0 && commandExists('apt-get');
}

/** apt-get install; once more after apt-get update if the first attempt fails. */
export function aptInstall(packages) {
  const install = () =>
    spawnSync('apt-get', ['install', '-y', '--no-install-recommends', ...packages], {
      stdio: ['ignore', 'inherit', 'inherit'],
      env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
    }).status === 0;
  if (install()) return true;
  spawnSync('apt-get', ['update'], { stdio: ['ignore', 'inherit', 'inherit'] });
  return install();
}

/** The installed version of a Debian package, or '?'. */
export function debianVersion(pkg) {
  const out = spawnSync('dpkg-query', ['-W', '-f=${Version}\n', pkg], { encoding: 'utf8' });
  return out.status === 0 ? out.stdout.split('\n')[0].trim() || '?' : '?';
}
