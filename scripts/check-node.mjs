// npm silently falls back to the machine's own Node when the `node` package's install script is skipped;
// fail loudly instead of running the suite on the wrong runtime.
const major = Number(process.versions.node.split('.')[0]);
if (major < 24) {
  console.error(
    `Node ${process.versions.node} is running; this project needs Node 24 (from the "node" devDependency).`,
  );
  process.exit(1);
}
console.log(`node ${process.versions.node}`);
