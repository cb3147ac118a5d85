// A function: the platform calls handle(event) for every request; it may be async.
export async function handle(event) {
  const name = event.message || 'world';
  console.log(`greeting ${name}`);
  return { reply: `hello ${name}` };
}
