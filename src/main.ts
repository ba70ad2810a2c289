// Entry point of the `assay` executable. `serve` first makes sure the allocator runs with the
// settings it was measured fastest with (src/lib/allocator.ts), which may replace this process
// with itself: done here, before the program is loaded (a dynamic import), so that the first image
// loads nothing it would throw away. Then the program itself (src/cli/main.ts).
import { tuneAllocator } from "./lib/allocator.ts";

if (process.argv[2] === "serve") tuneAllocator();
const { main } = await import("./cli/main.ts");
const { drained } = await import("./cli/out.ts");
const code = await main(process.argv.slice(2));
// Exit only once stdout and stderr are out: an exit with output still buffered cut a piped export
// at 64 KiB (src/cli/out.ts). Exit at all, because a command may leave a handle open.
if (code >= 0) {
  await drained();
  process.exit(code);
}
