// An import cut short (a reload, a closed tab, a lost connection), remembered in localStorage so
// the page can say so after a reload: the file's name and digest and how many of its batches were
// done (src/books/book-import.ts). Nothing else, and nothing secret: the token is never kept here.
// Loaded with the page, so it can open the import panel at once (app.ts); import-export.ts
// writes it.

const STORAGE_KEY = 'book-collection.import';

export interface ImportRecord {
  name: string;
  digest: string;
  /** Batches answered 200, of `total`. */
  done: number;
  total: number;
}

/** The import this browser did not finish, if any. */
export function importInterrupted(): ImportRecord | undefined {
  try {
    const saved = JSON.parse(localStorage.getItem(STORAGE_KEY) ?? 'null') as Partial<ImportRecord> | null;
    const { name, digest, done, total } = saved ?? {};
    if (typeof name === 'string' && typeof digest === 'string' && typeof done === 'number' && typeof total === 'number') return { name, digest, done, total };
  } catch {
    // Storage refused (a private mode), or not ours: nothing remembered.
  }
  return undefined;
}

/** Remembers the import under way (`undefined`: it finished, nothing to remember). */
export function rememberImport(record: ImportRecord | undefined): void {
  try {
    if (record) localStorage.setItem(STORAGE_KEY, JSON.stringify(record));
    else localStorage.removeItem(STORAGE_KEY);
  } catch {
    // Storage refused: choosing the same file again still finishes the import.
  }
}
