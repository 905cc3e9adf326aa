// Main process of a warm sandbox. The image has no shell, so this keeps the
// container alive between execs; it does nothing else and exits on SIGTERM.
process.title = "mini-agent-keepalive";
const timer = setInterval(() => {}, 1 << 30);
process.on("SIGTERM", () => {
  clearInterval(timer);
  process.exit(0);
});
