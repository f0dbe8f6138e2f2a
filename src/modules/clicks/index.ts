/** The clicks module's public face: other modules import from here only. */
export { isBotUserAgent } from './bot.js';
