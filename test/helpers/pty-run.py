# Runs a command on a real pseudo-terminal with a window size, as a person at a terminal would:
# the terminal's line discipline turns a typed Ctrl-C (\x03) into SIGINT for the foreground
# process, unless the program switched that off. Used by test/helpers/terminal.ts.
#
#   python3 pty-run.py <json>   with {"argv": [...], "cols": 100, "rows": 40,
#                                     "interruptAfter": "<text seen on the terminal>" | null,
#                                     "interruptDelay": seconds after it, "timeout": seconds,
#                                     "typeAfter": "<text seen>" | null, "type": "<keys>",
#                                     "typeDelay": seconds after it,
#                                     "typeRepeat": true to type it again after each delay}
# Prints one JSON line: {"output", "exitCode", "signal", "interruptedAt", "endedAt"} (seconds
# since the start).
import fcntl, json, os, pty, select, signal, struct, sys, termios, time

spec = json.loads(sys.argv[1])
start = time.monotonic()
pid, fd = pty.fork()
if pid == 0:
    os.execvp(spec["argv"][0], spec["argv"])

fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", spec.get("rows", 40), spec.get("cols", 100), 0, 0))
os.kill(pid, signal.SIGWINCH)
output = b""
wanted = spec.get("interruptAfter")
seen_at = None
interrupted_at = None
type_after = spec.get("typeAfter")
typed = False
type_seen_at = None
status = None
deadline = start + spec.get("timeout", 30)
while time.monotonic() < deadline:
    ready, _, _ = select.select([fd], [], [], 0.05)
    if ready:
        try:
            chunk = os.read(fd, 65536)
        except OSError:
            chunk = b""
        output += chunk
    if type_after is not None and type_seen_at is None and type_after.encode() in output:
        type_seen_at = time.monotonic()
    if type_seen_at is not None and not typed and time.monotonic() - type_seen_at >= spec.get("typeDelay", 0):
        os.write(fd, spec["type"].encode())
        typed = True
        if spec.get("typeRepeat"):
            # Typed again after the same delay until the child ends (a program busy with an
            # earlier key, such as less after a Ctrl-C, may drop one).
            typed = False
            type_seen_at = time.monotonic()
    if wanted is not None and seen_at is None and wanted.encode() in output:
        seen_at = time.monotonic()
    if seen_at is not None and interrupted_at is None and time.monotonic() - seen_at >= spec.get("interruptDelay", 0):
        os.write(fd, b"\x03")
        interrupted_at = time.monotonic() - start
    done, status = os.waitpid(pid, os.WNOHANG)
    if done:
        break
else:
    os.kill(pid, signal.SIGKILL)
    _, status = os.waitpid(pid, 0)
ended = time.monotonic() - start
# What is left in the terminal after the exit.
try:
    while True:
        ready, _, _ = select.select([fd], [], [], 0.05)
        if not ready:
            break
        chunk = os.read(fd, 65536)
        if not chunk:
            break
        output += chunk
except OSError:
    pass
print(json.dumps({
    "output": output.decode("utf-8", "replace"),
    "exitCode": os.WEXITSTATUS(status) if os.WIFEXITED(status) else None,
    "signal": os.WTERMSIG(status) if os.WIFSIGNALED(status) else None,
    "interruptedAt": interrupted_at,
    "endedAt": ended,
}))
