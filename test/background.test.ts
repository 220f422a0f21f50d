/** Background tasks (src/background.ts): begun only after the current turn of the event loop, so never before an answer being sent now; settle() waits for them; a failure is logged, never thrown. */
import { Writable } from 'node:stream';
import { expect, test } from 'vitest';
import { createBackgroundTasks } from '../src/background.js';
import { createLogger } from '../src/logger.js';

function logLines(): { lines: string[]; logger: ReturnType<typeof createLogger> } {
  const lines: string[] = [];
  const destination = new Writable({
    write(chunk, _encoding, done) {
      lines.push(chunk.toString());
      done();
    },
  });
  return { lines, logger: createLogger({ level: 'info', destination }) };
}

test('a task does not begin in the turn that asked for it, not even after every pending promise; settle() waits until it has ended', async () => {
  const tasks = createBackgroundTasks(logLines().logger);
  const events: string[] = [];
  tasks.run('probe', async () => {
    events.push('began');
    await new Promise((resolve) => setTimeout(resolve, 5));
    events.push('ended');
  });
  for (let i = 0; i < 20; i++) await Promise.resolve();
  events.push('answered');
  await tasks.settle();
  expect(events).toEqual(['answered', 'began', 'ended']);
});

test('a failing task is logged with its name, and settle() still resolves', async () => {
  const { lines, logger } = logLines();
  const tasks = createBackgroundTasks(logger);
  tasks.run('doomed', async () => {
    throw new Error('boom');
  });
  await tasks.settle();
  expect(lines.join('')).toContain('"task":"doomed"');
  expect(lines.join('')).toContain('background task failed');
});
