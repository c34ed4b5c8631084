// A form holding a book's fields (title, author, year) and a message for the whole form: the add
// form and the edit form. The fields are written once, as the template #book-fields of
// web/index.html; each form gets its own copy, its ids prefixed with the form's name.
import { FIELDS, YEAR_RANGE, readFields, type Book, type BookFields, type Field, type FieldErrors, type FormValues } from './books.js';
import { elements } from './elements.js';

export class BookForm {
  /** The message about the whole form (role=alert): why nothing was sent, or what the service said. */
  readonly error: HTMLElement;

  /** Puts a copy of the book's fields in `form`, before its buttons (`.actions`). */
  constructor(
    readonly form: HTMLFormElement,
    name: 'add' | 'edit',
  ) {
    const fields = elements.bookFields.content.cloneNode(true) as DocumentFragment;
    prefixIds(fields, name);
    const hint = fields.getElementById(`${name}-year-hint`);
    const error = fields.getElementById(`${name}-error`);
    if (!hint || !error) throw new Error('#book-fields lacks year-hint or error');
    hint.textContent = YEAR_RANGE;
    this.error = error;
    form.insertBefore(fields, form.querySelector(':scope > .actions'));
  }

  input(field: Field): HTMLInputElement {
    return this.form.elements.namedItem(field) as HTMLInputElement;
  }

  /** What the person typed. */
  private values(): FormValues {
    return { title: this.input('title').value, author: this.input('author').value, year: this.input('year').value };
  }

  /**
   * The book the fields make, checked as the service would (books.ts); undefined if a field is
   * wrong: then each wrong field is marked, `refusal` says nothing was sent, and the focus goes
   * to the first wrong field.
   */
  checkedFields(refusal: string): BookFields | undefined {
    const { fields, errors } = readFields(this.values());
    this.error.textContent = '';
    if (!this.showFieldErrors(errors)) return fields;
    this.error.textContent = refusal;
    this.firstInvalid().focus();
    return undefined;
  }

  fill(book: Book): void {
    for (const field of FIELDS) this.input(field).value = String(book[field]);
  }

  /** Marks each field of `errors` (aria-invalid and its message), clears the others; true if any. */
  private showFieldErrors(errors: FieldErrors): boolean {
    for (const field of FIELDS) {
      const input = this.input(field);
      const message = document.getElementById(`${input.id}-error`);
      const error = errors[field];
      if (error) input.setAttribute('aria-invalid', 'true');
      else input.removeAttribute('aria-invalid');
      if (message) message.textContent = error ?? '';
    }
    return Object.keys(errors).length > 0;
  }

  clearErrors(): void {
    this.showFieldErrors({});
    this.error.textContent = '';
  }

  /** The first field marked invalid, or the title: where the focus goes. */
  firstInvalid(): HTMLElement {
    return this.form.querySelector<HTMLElement>('[aria-invalid="true"]') ?? this.input('title');
  }
}

/** `id`, `for` and `aria-describedby` in `fields`, prefixed: "title" becomes "add-title". */
function prefixIds(fields: DocumentFragment, name: string): void {
  for (const element of fields.querySelectorAll('[id]')) element.id = `${name}-${element.id}`;
  for (const label of fields.querySelectorAll('label')) label.htmlFor = `${name}-${label.htmlFor}`;
  for (const element of fields.querySelectorAll('[aria-describedby]')) {
    const ids = element.getAttribute('aria-describedby')?.split(/\s+/) ?? [];
    element.setAttribute('aria-describedby', ids.map((id) => `${name}-${id}`).join(' '));
  }
}
