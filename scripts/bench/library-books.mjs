// The books of the library-scale phase: the i-th book made of word lists (a title of three
// words, ~20 characters; an author of a first name and a surname, ~15; a year over five
// centuries), the same on every store and at every size, so that a two-term search matches a
// realistic handful that grows with the collection. A hash of i picks the words: neighbouring
// ids get unrelated titles, as books added over the years would.

const TITLE_WORDS = [
  'silent', 'river', 'garden', 'winter', 'shadow', 'empire', 'golden', 'lost', 'city', 'stone',
  'night', 'summer', 'forest', 'secret', 'ocean', 'broken', 'crown', 'island', 'bright', 'dark',
  'mirror', 'storm', 'letter', 'house', 'north', 'south', 'hidden', 'last', 'first', 'little',
  'iron', 'glass', 'paper', 'velvet', 'winds', 'morning', 'evening', 'journey', 'harbor', 'valley',
  'castle', 'bridge', 'tower', 'road', 'field', 'dream', 'memory', 'promise', 'fire', 'water',
  'silver', 'amber', 'scarlet', 'quiet', 'wild', 'ancient', 'distant', 'burning', 'frozen', 'falling',
  'mountain', 'desert', 'meadow', 'lantern', 'compass', 'orchard', 'kingdom', 'machine', 'thunder', 'echo',
  'spring', 'autumn', 'raven', 'wolf', 'tiger', 'falcon', 'lily', 'rose', 'thorn', 'feather',
  'clock', 'candle', 'window', 'door', 'harvest', 'street', 'market', 'station', 'voyage', 'legend',
  'song', 'tale', 'hour', 'year', 'age', 'light', 'sky', 'moon', 'sun', 'star',
];
const FIRST_NAMES = [
  'anna', 'james', 'maria', 'peter', 'elena', 'david', 'sofia', 'thomas', 'clara', 'martin',
  'laura', 'simon', 'julia', 'oscar', 'helen', 'victor', 'irene', 'louis', 'alice', 'hugo',
  'nora', 'felix', 'emma', 'henry', 'rosa', 'karl', 'lucia', 'paul', 'ines', 'leo',
  'marta', 'ivan', 'greta', 'omar', 'yuki', 'chen', 'amara', 'diego', 'fatima', 'kofi',
];
const SURNAMES = [
  'hartley', 'okafor', 'lindqvist', 'moreau', 'castillo', 'brennan', 'nakamura', 'petrov', 'fischer', 'abernathy',
  'delacroix', 'whitfield', 'santos', 'kowalski', 'haddad', 'oyelaran', 'vasquez', 'thornton', 'bergstrom', 'marchetti',
  'ashworth', 'takahashi', 'novak', 'galloway', 'rahman', 'lindgren', 'fontaine', 'mbeki', 'sorensen', 'caldwell',
  'ferreira', 'kaminski', 'holloway', 'iversen', 'montague', 'adeyemi', 'rasmussen', 'quintero', 'whitmore', 'zielinski',
  'blackwood', 'duchamp', 'eriksen', 'grimaldi', 'huxley', 'jovanovic', 'kendrick', 'lachance', 'merriweather', 'northcott',
  'pemberton', 'ravensworth', 'sinclair', 'tennyson', 'underwood', 'valdez', 'winslow', 'yamamoto', 'zamora', 'osei',
];

/** Searches of the phase: a title word and a surname, each a handful at 10,000 books. */
export const LIBRARY_QUERIES = [
  'winter hartley', 'river okafor', 'garden moreau', 'shadow nakamura',
  'stone petrov', 'crown santos', 'lantern novak', 'raven sinclair',
];

const capitalised = (word) => word[0].toUpperCase() + word.slice(1);

/** MurmurHash3's 32-bit finaliser: a well-mixed unsigned 32-bit hash of an integer. */
function mix(value) {
  let h = value >>> 0;
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

/** Title, author and year of the i-th library book (i from 1). */
export function libraryBook(i) {
  const t = mix(i);
  const a = mix(i ^ 0x5bd1e995);
  const n = TITLE_WORDS.length;
  const title = `${capitalised(TITLE_WORDS[t % n])} ${TITLE_WORDS[Math.floor(t / n) % n]} ${TITLE_WORDS[Math.floor(t / n / n) % n]}`;
  const author = `${capitalised(FIRST_NAMES[a % FIRST_NAMES.length])} ${capitalised(SURNAMES[Math.floor(a / FIRST_NAMES.length) % SURNAMES.length])}`;
  const year = 1500 + (Math.floor(a / 65_536) % 526);
  return [title, author, year];
}

/** How many of books 1..total each search matches, by the contract's rule (each term starts a word). */
export function expectedMatches(queries, total) {
  const termsOf = queries.map((query) => query.toLowerCase().split(/[^\p{L}\p{N}]+/u).filter(Boolean));
  const counts = queries.map(() => 0);
  for (let i = 1; i <= total; i += 1) {
    const [title, author] = libraryBook(i);
    const words = `${title} ${author}`.toLowerCase().split(' ');
    termsOf.forEach((terms, q) => {
      if (terms.every((term) => words.some((word) => word.startsWith(term)))) counts[q] += 1;
    });
  }
  return counts;
}
