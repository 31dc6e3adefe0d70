// Uploads a 20 MB body N times, one after the other, through Node's fetch, from its own process (as a
// real client would: in the test's own process the server and client share one event loop, which hides
// the reset). Prints one JSON line: what each try got (`413 PAYLOAD_TOO_LARGE` or the error's code).
// Usage: node upload-client.mjs <url> <public key> <secret> <tries> <declared|chunked>
const [url, publicKey, secret, tries, framing] = process.argv.slice(2);
const size = 20 * 1024 * 1024;

function body() {
  if (framing === 'declared') return Buffer.alloc(size, 0x20);
  const piece = new Uint8Array(64 * 1024).fill(0x20);
  let sent = 0;
  return new ReadableStream({
    pull(controller) {
      if (sent >= size) return controller.close();
      sent += piece.length;
      controller.enqueue(piece);
    },
  });
}

const outcomes = [];
for (let i = 0; i < Number(tries); i++) {
  try {
    const res = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'public-api-key': publicKey, 'private-secret-key': secret },
      body: body(),
      duplex: 'half',
    });
    const text = await res.text();
    let code = '';
    try {
      code = JSON.parse(text).code;
    } catch {}
    outcomes.push(`${res.status} ${res.headers.get('content-type')?.split(';')[0]} ${code}`);
  } catch (err) {
    outcomes.push(`${err.message} ${err.cause?.code ?? ''}`.trim());
  }
}
console.log(JSON.stringify(outcomes));
