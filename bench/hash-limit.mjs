// The machine's bcrypt ceiling: one thread per core hashing at the given cost for `seconds`.
import os from 'node:os';
import { Worker } from 'node:worker_threads';
import { createRequire } from 'node:module';

const [rounds = '10', seconds = '5'] = process.argv.slice(2);
const bcryptPath = createRequire(import.meta.url).resolve('bcrypt');
const cores = os.availableParallelism();
const source = `
const { parentPort, workerData } = require('node:worker_threads');
const bcrypt = require(workerData.bcryptPath);
const end = Date.now() + workerData.ms;
let n = 0;
while (Date.now() < end) { bcrypt.hashSync('benchmark-secret', workerData.rounds); n++; }
parentPort.postMessage(n);`;
const started = Date.now();
const counts = await Promise.all(
  Array.from(
    { length: cores },
    () =>
      new Promise((resolve, reject) => {
        const worker = new Worker(source, { eval: true, workerData: { bcryptPath, rounds: Number(rounds), ms: Number(seconds) * 1000 } });
        worker.once('message', resolve);
        worker.once('error', reject);
      }),
  ),
);
const elapsed = (Date.now() - started) / 1000;
console.log(JSON.stringify({ cores, hashesPerSecond: counts.reduce((a, b) => a + b, 0) / elapsed }));
