/** The c2sp.org/tlog-policy files of the witness vectors (./vectors.gen.ts writes them to policies.json). */
import { log, mldsaVkey, w1, w2, w3, x1, x2, y1 } from './keys.ts';

export const policies = {
  about:
    'c2sp.org/tlog-policy files. valid: parsed, then `checks` give the witnesses (policy names) that cosigned and whether the quorum is met. invalid: refused with INVALID_POLICY at `line` (0: the file as a whole).',
  valid: [
    {
      name: 'one witness',
      text: `log ${log.vkey} https://log.example/\nwitness w1 ${w1.vkey} https://w1.example/\nquorum w1\n`,
      logs: 1,
      witnesses: ['w1'],
      checks: [
        { cosigned: [], met: false },
        { cosigned: ['w1'], met: true },
      ],
    },
    {
      name: 'two levels of groups, comments, tabs',
      text: `# the spec's example\n  log ${log.vkey}\n\nwitness X1 ${w1.vkey}\nwitness\tX2 ${w2.vkey}\nwitness X3 ${w3.vkey}\ngroup X-witnesses 2 X1 X2 X3\nwitness Y1 ${x1.vkey}\nwitness Y2 ${x2.vkey}\nwitness Y3 ${y1.vkey}\ngroup Y-witnesses any Y1 Y2 Y3\n\t# nested\ngroup X-and-Y all X-witnesses Y-witnesses\nquorum X-and-Y   \n`,
      logs: 1,
      witnesses: ['X1', 'X2', 'X3', 'Y1', 'Y2', 'Y3'],
      checks: [
        { cosigned: ['X1', 'X2'], met: false },
        { cosigned: ['X1', 'Y3'], met: false },
        { cosigned: ['X1', 'X3', 'Y2'], met: true },
        { cosigned: ['X1', 'X2', 'X3', 'Y1', 'Y2', 'Y3'], met: true },
      ],
    },
    {
      name: 'quorum none, no witness',
      text: `log ${log.vkey}\nquorum none\n`,
      logs: 1,
      witnesses: [],
      checks: [{ cosigned: [], met: true }],
    },
    {
      name: 'no log line, no final newline',
      text: `witness a ${w1.vkey}\nwitness b ${w2.vkey}\ngroup g 1 a b\nquorum g`,
      logs: 0,
      witnesses: ['a', 'b'],
      checks: [
        { cosigned: ['b'], met: true },
        { cosigned: [], met: false },
      ],
    },
  ],
  invalid: [
    { name: 'no quorum line', text: `log ${log.vkey}\nwitness w1 ${w1.vkey}\n`, line: 0 },
    { name: 'CRLF line ends (C2SP text formats end lines with LF)', text: `log ${log.vkey}\r\nquorum none\r\n`, line: 1 },
    { name: 'two quorum lines', text: `witness w1 ${w1.vkey}\nquorum w1\nquorum none\n`, line: 3 },
    { name: 'quorum names an unknown witness', text: `witness w1 ${w1.vkey}\nquorum w2\n`, line: 2 },
    { name: 'quorum before its witness (forward reference)', text: `quorum w1\nwitness w1 ${w1.vkey}\n`, line: 1 },
    { name: 'group refers forward', text: `witness a ${w1.vkey}\ngroup g any a b\nwitness b ${w2.vkey}\nquorum g\n`, line: 2 },
    { name: 'duplicate witness name', text: `witness a ${w1.vkey}\nwitness a ${w2.vkey}\nquorum a\n`, line: 2 },
    { name: 'group and witness share a name', text: `witness a ${w1.vkey}\ngroup a any a\nquorum a\n`, line: 2 },
    { name: 'duplicate witness key under another name', text: `witness a ${w1.vkey}\nwitness b ${w1.vkey}\nquorum a\n`, line: 2 },
    { name: 'duplicate log key', text: `log ${log.vkey}\nlog ${log.vkey} https://mirror.example/\nquorum none\n`, line: 2 },
    { name: 'group threshold 0', text: `witness a ${w1.vkey}\ngroup g 0 a\nquorum g\n`, line: 2 },
    { name: 'group threshold above its members', text: `witness a ${w1.vkey}\nwitness b ${w2.vkey}\ngroup g 3 a b\nquorum g\n`, line: 3 },
    { name: 'group threshold not a number', text: `witness a ${w1.vkey}\ngroup g two a\nquorum g\n`, line: 2 },
    { name: 'group with no member', text: `witness a ${w1.vkey}\ngroup g any\nquorum a\n`, line: 2 },
    { name: 'member listed twice', text: `witness a ${w1.vkey}\nwitness b ${w2.vkey}\ngroup g 2 a b a\nquorum g\n`, line: 3 },
    {
      name: 'a name in two groups (c2sp.org/tlog-policy: a member of at most one)',
      text: `witness a ${w1.vkey}\nwitness b ${w2.vkey}\ngroup A any a b\ngroup B 2 A a\nquorum B\n`,
      line: 4,
    },
    { name: 'none as a member', text: `witness a ${w1.vkey}\ngroup g any a none\nquorum g\n`, line: 2 },
    { name: 'none as a witness name', text: `witness none ${w1.vkey}\nquorum none\n`, line: 1 },
    { name: 'unknown keyword', text: `witness a ${w1.vkey}\nwitnesses b ${w2.vkey}\nquorum a\n`, line: 2 },
    { name: 'carriage return (CRLF file)', text: `witness a ${w1.vkey}\r\nquorum a\r\n`, line: 1 },
    { name: 'log key of the cosignature type', text: `log ${w1.vkey}\nquorum none\n`, line: 1 },
    { name: 'witness key of the note type 0x01', text: `witness a ${log.vkey}\nquorum a\n`, line: 1 },
    { name: 'witness key of type ML-DSA-44 (0x06), not verified here', text: `witness pq ${mldsaVkey}\nquorum pq\n`, line: 1 },
    { name: 'key ID that does not match', text: `witness a ${w1.vkey.replace(`+${w1.idHex}+`, '+00000000+')}\nquorum a\n`, line: 1 },
    { name: 'witness URL not http(s)', text: `witness a ${w1.vkey} ftp://w1.example/\nquorum a\n`, line: 1 },
    { name: 'quorum line with two names', text: `witness a ${w1.vkey}\nwitness b ${w2.vkey}\nquorum a b\n`, line: 3 },
  ],
};
