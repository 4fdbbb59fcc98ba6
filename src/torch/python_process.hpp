#pragma once
// Runs one of kfoundry's Python helpers (src/torch/*.py) in a child process: the interpreter is
// $KF_PYTHON, else `python3` on PATH, falling back to Debian's /usr/bin/python3 where the first
// has no PyTorch. The child gets its own process group, killed whole at the deadline, so a
// problem file that hangs or spawns cannot hold kfoundry.

#include <string>
#include <vector>

namespace kf {

struct PythonRun {
  int exit_code = -1;       // the helper's exit code, or -1 when it did not exit by itself
  std::string out;          // stdout (the helper's JSON answer)
  std::string err;          // stderr, its last 64 KiB
  std::string failure;      // "" or why no exit code came back (timeout, signal, exec failure)
  std::string interpreter;  // the interpreter that ran
};

// The exit code by which a helper says "PyTorch is not importable here".
inline constexpr int kPythonNoTorch = 3;

// The folder of the Python helpers: $KF_TORCH_HELPERS, the installed share/kfoundry/torch, or the
// source tree's src/torch.
std::string TorchHelpersDir();

// Runs `interpreter helper args...`, collecting stdout and stderr, killing it after
// `timeout_s` seconds.
PythonRun RunPython(const std::string& interpreter, const std::string& helper,
                    const std::vector<std::string>& args, double timeout_s);

// RunPython with the interpreter chosen as above: with $KF_PYTHON unset, a `python3` whose helper
// exits kPythonNoTorch is followed by /usr/bin/python3.
PythonRun RunTorchHelper(const std::string& helper, const std::vector<std::string>& args,
                         double timeout_s);

}  // namespace kf
