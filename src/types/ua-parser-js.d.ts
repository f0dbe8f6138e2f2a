// ua-parser-js 1.0.41 ships no types; the part Ferry uses (src/modules/clicks/event/user-agent.ts).
declare module 'ua-parser-js' {
  interface UAParserResult {
    ua: string;
    browser: { name?: string; version?: string; major?: string };
    os: { name?: string; version?: string };
    device: { type?: string; vendor?: string; model?: string };
    engine: { name?: string; version?: string };
    cpu: { architecture?: string };
  }
  class UAParser {
    constructor(ua?: string);
    getResult(): UAParserResult;
    getBrowser(): UAParserResult['browser'];
    getOS(): UAParserResult['os'];
    getDevice(): UAParserResult['device'];
  }
  export default UAParser;
  export { UAParser, type UAParserResult };
}
