// Injected by web/build.mjs wherever the page's bundle names `SharedArrayBuffer`. A page that is
// not cross-origin isolated has no SharedArrayBuffer, and whatwg-url's type checks (the
// normalization rule the page shares with the service) read its prototype when they load. Such a
// page can hold no shared buffer, so the stand-in is a class nothing is an instance of: its
// getters throw on any other value, as the real ones do, and "is it shared?" answers no.
class NoSharedArrayBuffer {
  #never = true;
  get byteLength(): number {
    return this.#never ? 0 : 0;
  }
  get growable(): boolean {
    return !this.#never;
  }
}

const SharedArrayBufferOrNone: unknown = (globalThis as { SharedArrayBuffer?: unknown }).SharedArrayBuffer ?? NoSharedArrayBuffer;

export { SharedArrayBufferOrNone as SharedArrayBuffer };
