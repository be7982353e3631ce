// What `yoke init` may see of a checkout: which files exist, and their text.
// Deciding from it is pure; the command hands it the real files.

export interface CheckoutView {
  exists(path: string): boolean;
  read(path: string): string | null;
}
