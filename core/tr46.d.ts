// tr46 (UTS #46, the IDNA processing whatwg-url is built on) ships no types: the one function
// core/rules/domain.ts calls, as its README documents it.
declare module 'tr46' {
  /** The Unicode form of a domain's labels; `error` when one cannot be processed. */
  export function toUnicode(
    domainName: string,
    options?: { checkHyphens?: boolean; checkBidi?: boolean; checkJoiners?: boolean; useSTD3ASCIIRules?: boolean },
  ): {
    domain: string;
    error: boolean;
  };
}
