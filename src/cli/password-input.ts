import { usageError } from './cli-error.js';
import type { CommandContext } from './command.js';

/**
 * A new password for an account: asked for twice, without echo, at a terminal; otherwise the first line of
 * standard input (`printf '%s\n' "$PASSWORD" | ferry users set-password ada`). Never an argument: a command
 * line is visible to every user of the machine (ps, /proc) and kept in shell histories.
 */
export async function readNewPassword(ctx: Pick<CommandContext, 'stdin' | 'out'>): Promise<string> {
  const { stdin } = ctx;
  const prompt = (text: string) => ctx.out.prompt(text);
  if (!stdin.isTTY) {
    const line = (await readAll(stdin)).split(/\r?\n/)[0] ?? '';
    if (line === '')
      throw usageError('no password: give it on standard input (first line) or run at a terminal to be asked');
    return line;
  }
  const first = await readHidden(stdin, prompt, 'New password: ');
  const second = await readHidden(stdin, prompt, 'Repeat it: ');
  if (first !== second) throw usageError('the two passwords differ');
  return first;
}

async function readAll(stream: NodeJS.ReadableStream): Promise<string> {
  let text = '';
  for await (const chunk of stream) {
    text += chunk.toString();
    if (text.includes('\n')) break;
  }
  return text;
}

/** One line typed at the terminal, not echoed (raw mode; Ctrl-C and Ctrl-D abandon). */
function readHidden(stdin: CommandContext['stdin'], prompt: (text: string) => void, question: string): Promise<string> {
  prompt(question);
  return new Promise((resolve, reject) => {
    let typed = '';
    stdin.setRawMode?.(true);
    stdin.resume();
    const done = (err: Error | null) => {
      stdin.removeListener('data', onData);
      stdin.setRawMode?.(false);
      stdin.pause();
      prompt('\n');
      if (err) reject(err);
      else resolve(typed);
    };
    const onData = (chunk: Buffer | string) => {
      for (const ch of chunk.toString()) {
        if (ch === '\r' || ch === '\n') return done(null);
        if (ch === '\u0003' || ch === '\u0004') return done(usageError('abandoned'));
        if (ch === '\u007f' || ch === '\b') typed = typed.slice(0, -1);
        else typed += ch;
      }
      return undefined;
    };
    stdin.on('data', onData);
  });
}
