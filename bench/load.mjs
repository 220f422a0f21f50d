// One load run in its own process (so the load generator is never the server's event loop):
// argv[2] is a JSON description; prints one JSON line with the figures.
import autocannon from 'autocannon';

const spec = JSON.parse(process.argv[2]);
let counter = 0;
const prefix = `${process.pid}-${Date.now().toString(36)}`;

const requests = [
  {
    method: spec.method ?? 'GET',
    path: spec.path,
    headers: spec.headers ?? {},
    ...(spec.body ? { body: JSON.stringify(spec.body) } : {}),
    ...(spec.uniqueEmail
      ? {
          setupRequest: (request) => ({
            ...request,
            body: JSON.stringify({ ...spec.body, email: `u${prefix}-${counter++}@bench.example` }),
          }),
        }
      : {}),
    // Logins spread over several accounts (each request the next email of the list, in turn).
    ...(spec.emails
      ? {
          setupRequest: (request) => ({
            ...request,
            body: JSON.stringify({ ...spec.body, email: spec.emails[counter++ % spec.emails.length] }),
          }),
        }
      : {}),
  },
];

const result = await autocannon({
  url: spec.url,
  connections: spec.connections ?? 10,
  duration: spec.duration ?? 5,
  requests,
  timeout: 30,
});
const statuses = {};
for (const [key, value] of Object.entries(result)) {
  const match = /^(\d)xx$/.exec(key);
  if (match && value > 0) statuses[key] = value;
}
console.log(
  JSON.stringify({
    requests: result.requests.total,
    rps: result.requests.total / (result.duration || spec.duration),
    p50: result.latency.p50,
    p99: result.latency.p99,
    errors: result.errors,
    timeouts: result.timeouts,
    statuses,
  }),
);
