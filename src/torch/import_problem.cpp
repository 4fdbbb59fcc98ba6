#include "torch/import_problem.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <climits>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "core/dtype.hpp"
#include "core/input_error.hpp"
#include "core/task.hpp"
#include "torch/python_process.hpp"
#include "torch/starting_kernels.hpp"

namespace kf {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

// The tolerance a tensor's type asks for, and what it is: fp32 (or wider, or integers) compared
// with a reference run with TF32 off, fp16 with half's precision, bf16 eight times fp16's (8 bits
// of mantissa against 11). A task takes its narrowest type's (the largest tolerance).
struct TypeTolerance {
  double tol;
  const char* what;
};
TypeTolerance ToleranceOf(DType t) {
  if (t == DType::kBF16) return {8e-2, "bf16 data"};
  if (t == DType::kF16) return {1e-2, "fp16 data"};
  return {1e-4, "fp32 data, against a reference run with TF32 off"};
}
TypeTolerance Looser(TypeTolerance a, TypeTolerance b) {
  return b.tol > a.tol ? b : a;
}
// A parameter the module initialises to a constant (LayerNorm's weight of ones, a bias of zeros)
// is drawn within this distance of it instead, so a kernel that ignores it fails.
constexpr double kConstantParameterSpread = 0.5;

[[noreturn]] void Fail(const std::string& problem, const std::string& why) {
  std::string line = why;
  std::replace(line.begin(), line.end(), '\n', ' ');
  throw InputError(problem, 0, "import", line);
}

std::string Quoted(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    if (static_cast<unsigned char>(c) < 0x20) {
      out += fmt::format("\\u{:04x}", static_cast<unsigned>(c));
      continue;
    }
    out += c;
  }
  return out + "\"";
}

std::string Number(double v) {
  return fmt::format("{}", v);
}

std::string ShapeToml(const std::vector<std::string>& shape) {
  // A 0-d tensor (a loss, a counter) is one element.
  if (shape.empty()) return "[\"1\"]";
  std::string out = "[";
  for (size_t i = 0; i < shape.size(); ++i) out += (i ? ", " : "") + Quoted(shape[i]);
  return out + "]";
}

// "4 * batch_size * (height - 1)": the bytes of one tensor.
std::string BytesExpr(DType t, const std::vector<std::string>& shape) {
  std::string out = std::to_string(DTypeSize(t));
  for (const std::string& d : shape)
    out += d.find(' ') == std::string::npos ? " * " + d : " * (" + d + ")";
  return out;
}

struct Tensor {
  std::string name;
  DType dtype = DType::kF32;
  std::vector<std::string> shape;
  std::string init;     // the TOML inline table, "" for an output
  std::string comment;  // where the tensor comes from
};

DType DTypeOf(const std::string& problem, const json& t) {
  std::optional<DType> d = ParseDType(t.at("dtype").get<std::string>());
  if (!d) Fail(problem, "unknown dtype " + t.at("dtype").get<std::string>());
  return *d;
}

std::string InputInit(const std::string& problem, const json& dist, size_t index,
                      std::string& note) {
  std::string kind = dist.at("kind").get<std::string>();
  if (kind == "uniform")
    return fmt::format("{{ dist = \"uniform\", low = {}, high = {} }}",
                       Number(dist.at("low").get<double>()), Number(dist.at("high").get<double>()));
  if (kind == "normal")
    return fmt::format("{{ dist = \"normal\", mean = {}, std = {} }}",
                       Number(dist.at("mean").get<double>()), Number(dist.at("std").get<double>()));
  if (kind == "randint") {  // integers in [low, high), the bounds evaluated at each size set
    std::string low = dist.at("low").get<std::string>(), high = dist.at("high").get<std::string>();
    note = fmt::format("get_inputs() element {}: torch.randint({}, {})", index, low, high);
    return fmt::format("{{ dist = \"randint\", low = {}, high = {} }}", Quoted(low), Quoted(high));
  }
  Fail(problem, "unknown distribution " + kind);
}

std::string ParameterInit(const json& p, std::string& note) {
  const json& init = p.at("init");
  bool buffer = p.at("kind").get<std::string>() == "buffer";
  if (init.at("kind").get<std::string>() == "constant") {
    double c = init.at("value").get<double>();
    if (buffer) {
      note = fmt::format("buffer {}, {} as the module builds it",
                         p.at("torch_name").get<std::string>(), Number(c));
      return fmt::format("{{ dist = \"constant\", value = {} }}", Number(c));
    }
    note = fmt::format("parameter {} (built as the constant {}; drawn around it so it matters)",
                       p.at("torch_name").get<std::string>(), Number(c));
    return fmt::format("{{ dist = \"uniform\", low = {}, high = {} }}",
                       Number(c - kConstantParameterSpread), Number(c + kConstantParameterSpread));
  }
  double lo = init.at("low").get<double>(), hi = init.at("high").get<double>();
  note = fmt::format("{} {}, drawn over the range the module's own initialisation gives",
                     p.at("kind").get<std::string>(), p.at("torch_name").get<std::string>());
  return fmt::format("{{ dist = \"uniform\", low = {}, high = {} }}", Number(lo), Number(hi));
}

// Names as kernel parameters: identifiers, unique, none a size's name (sizes are scalars too).
void MakeNamesUnique(std::vector<Tensor>& tensors, const std::vector<std::string>& sizes) {
  std::set<std::string> taken(sizes.begin(), sizes.end());
  for (Tensor& t : tensors) {
    std::string name = t.name;
    while (taken.count(name)) name += "_t";
    taken.insert(name);
    t.name = name;
  }
}

void WriteSizeSet(std::ostringstream& out, const char* kind, const std::string& name,
                  const std::string& device_class, const std::vector<std::string>& sizes,
                  const json& values) {
  out << "\n[[" << kind << "]]\nname = " << Quoted(name) << "\n";
  if (!device_class.empty()) out << "device_class = " << Quoted(device_class) << "\n";
  for (const std::string& s : sizes) out << s << " = " << values.at(s).get<int64_t>() << "\n";
}

}  // namespace

std::string ImportedTaskName(const std::string& problem) {
  std::string stem = fs::path(problem).stem().string();
  while (stem.size() > 1 && stem.back() == '_') stem.pop_back();
  return stem;
}

std::string TaskTomlFromInspection(const json& j, const std::string& name,
                                   const std::string& problem, const std::string& model_file,
                                   std::vector<SignatureArg>* signature) {
  try {
    std::vector<std::string> sizes;
    for (const json& s : j.at("sizes")) sizes.push_back(s.at("name").get<std::string>());
    if (sizes.empty())
      Fail(problem,
           "no module-level integer constant decides an input's shape, so the task would have "
           "no sizes to check at (write the shapes with named constants: batch_size = 16)");
    const json& sets = j.at("size_sets");
    std::vector<std::map<std::string, double>> all_sets;
    for (const json* s : {&sets.at("bench"), &sets.at("cpu")})
      all_sets.push_back(s->get<std::map<std::string, double>>());
    for (const json& c : sets.at("check"))
      all_sets.push_back(c.at("sizes").get<std::map<std::string, double>>());

    std::vector<Tensor> tensors;
    size_t inputs = 0, outputs = 0;
    TypeTolerance tolerance = ToleranceOf(DType::kF32);
    for (const json& in : j.at("inputs")) {
      Tensor t{in.at("name").get<std::string>(), DTypeOf(problem, in),
               in.at("shape").get<std::vector<std::string>>(), "", ""};
      t.init = InputInit(problem, in.at("dist"), inputs, t.comment);
      if (t.comment.empty())
        t.comment =
            fmt::format("get_inputs() element {}: torch.{}", inputs,
                        in.at("dist").at("kind").get<std::string>() == "normal" ? "randn" : "rand");
      tolerance = Looser(tolerance, ToleranceOf(t.dtype));
      tensors.push_back(std::move(t));
      ++inputs;
    }
    for (const json& p : j.at("parameters")) {
      Tensor t{p.at("name").get<std::string>(), DTypeOf(problem, p),
               p.at("shape").get<std::vector<std::string>>(), "", ""};
      t.init = ParameterInit(p, t.comment);
      tensors.push_back(std::move(t));
    }
    for (const json& o : j.at("outputs")) {
      Tensor t{o.at("name").get<std::string>(), DTypeOf(problem, o),
               o.at("shape").get<std::vector<std::string>>(), "", ""};
      t.comment = fmt::format("forward's output {}", outputs++);
      tolerance = Looser(tolerance, ToleranceOf(t.dtype));
      tensors.push_back(std::move(t));
    }
    MakeNamesUnique(tensors, sizes);

    std::ostringstream out;
    out << "# Imported by `kfoundry import` from " << fs::path(problem).filename().string()
        << " (KernelBench's form), the task's\n"
        << "# reference (" << model_file << "). The signature: get_inputs()'s tensors in order, "
        << "the model's parameters and\n"
        << "# buffers, the outputs, then every size as a scalar (docs/pytorch.md).\n";
    out << "name = " << Quoted(name) << "\n";
    const json op = j.value("op", json());
    out << "op_class = " << Quoted(OpClassOf(op)) << "\n";
    std::string description = j.value("description", "");
    out << "description = "
        << Quoted(description.empty() ? "Imported from " + fs::path(problem).filename().string()
                                      : description)
        << "\n\n";
    out << "sizes = [";
    for (size_t i = 0; i < sizes.size(); ++i) out << (i ? ", " : "") << Quoted(sizes[i]);
    out << "]\n";

    for (const Tensor& t : tensors) {
      out << "\n[[args]]  # " << t.comment << "\n";
      out << "name = " << Quoted(t.name) << "\ntype = " << Quoted(std::string(DTypeName(t.dtype)))
          << "\nshape = " << ShapeToml(t.shape) << "\n";
      out << "role = " << (t.init.empty() ? "\"out\"" : "\"in\"") << "\n";
      if (!t.init.empty()) out << "init = " << t.init << "\n";
    }
    if (signature) {
      signature->clear();
      for (const Tensor& t : tensors) signature->push_back({t.name, t.dtype, true, t.init.empty()});
    }
    for (const std::string& s : sizes) {
      double largest = 0;
      for (const auto& set : all_sets) largest = std::max(largest, set.at(s));
      bool wide = largest > INT32_MAX;
      out << "\n[[args]]\nname = " << Quoted(s) << "\ntype = \"" << (wide ? "i64" : "i32")
          << "\"\nvalue = " << Quoted(s) << "\n";
      if (signature) signature->push_back({s, wide ? DType::kI64 : DType::kI32, false, false});
    }

    out << "\n# Check sets: derived from the problem's sizes, smaller and ragged, so a kernel that "
           "hard-codes\n# the problem's shape fails them.";
    for (const json& c : sets.at("check"))
      WriteSizeSet(out, "check", c.at("name").get<std::string>(), "", sizes, c.at("sizes"));
    out << "\n# The problem's own sizes, and the same scaled down for PoCL on a CPU.";
    WriteSizeSet(out, "bench", "problem", "gpu", sizes, sets.at("bench"));
    WriteSizeSet(out, "bench", "cpu", "cpu", sizes, sets.at("cpu"));

    const double tol = tolerance.tol;
    out << "\n[tolerance]\n# " << tolerance.what
        << ". Every element within atol + rtol * |ref| (torch.allclose's rule,\n"
        << "# as KernelBench checks); the share past 1% relative error is not limited: an output "
           "near zero\n# (a normalised value, a sum that cancels) passes allclose with a large "
           "relative error.\n"
        << "atol = " << Number(tol) << "\nrtol = " << Number(tol) << "\nmax_bad_ratio = 1.0\n";

    out << "\n[cost]\n# Every input, parameter and output moved once.\nmin_bytes = \"";
    for (size_t i = 0; i < tensors.size(); ++i)
      out << (i ? " + " : "") << BytesExpr(tensors[i].dtype, tensors[i].shape);
    out << "\"\n";

    out << "\n[kernels]\nreference = { torch = " << Quoted(model_file) << " }\n";
    if (!StartingKernelFiles(op, Language::kOpenCL).empty()) {
      // No baseline kernel: PyTorch eager is the time to beat, and the search starts from these.
      out << "# Starting kernels for the op class " << op.at("class").get<std::string>()
          << " (src/torch/templates), filled in for this signature: the search starts from them.\n"
          << "# No baseline kernel: PyTorch eager, on the same device and inputs, is the time to "
             "beat.\n";
      out << "templates = " << StartingKernelsToml(op) << "\n";
    }
    return out.str();
  } catch (const json::exception& e) {
    Fail(problem, fmt::format("the inspector's answer is malformed ({})", e.what()));
  }
}

ImportedTask ImportProblem(const ImportOptions& options) {
  const std::string& problem = options.problem;
  std::error_code ec;
  if (!fs::is_regular_file(problem, ec)) Fail(problem, "no such file");
  ImportedTask imported;
  imported.name = ImportedTaskName(problem);
  imported.dir = options.out_dir.empty() ? imported.name : options.out_dir;
  if (fs::exists(fs::path(imported.dir) / "task.toml", ec))
    Fail(problem, fmt::format("{} already holds a task.toml (remove it or choose another -o)",
                              imported.dir));

  std::string helper = TorchHelpersDir() + "/kb_inspect.py";
  PythonRun run = RunTorchHelper(helper, {fs::absolute(problem).string()}, options.timeout_s);
  if (!run.failure.empty()) Fail(problem, "inspecting it failed: " + run.failure);
  json answer = json::parse(run.out, nullptr, false);
  if (answer.is_object() && answer.contains("error") && answer["error"].is_string())
    Fail(problem, answer["error"].get<std::string>());
  if (run.exit_code != 0 || !answer.is_object()) {
    std::string last = run.err;
    while (!last.empty() && (last.back() == '\n' || last.back() == ' ')) last.pop_back();
    last = last.substr(last.rfind('\n') == std::string::npos ? 0 : last.rfind('\n') + 1);
    Fail(problem, fmt::format("inspecting it with {} failed (exit code {}){}", run.interpreter,
                              run.exit_code, last.empty() ? "" : ": " + last));
  }
  imported.inspection = answer;

  const std::string model_file = "model.py";
  std::vector<SignatureArg> signature;
  std::string toml = TaskTomlFromInspection(answer, imported.name, problem, model_file, &signature);
  fs::create_directories(imported.dir, ec);
  if (ec) Fail(problem, fmt::format("cannot create {}: {}", imported.dir, ec.message()));
  fs::copy_file(problem, fs::path(imported.dir) / model_file, fs::copy_options::overwrite_existing,
                ec);
  if (ec) Fail(problem, fmt::format("cannot copy it into {}: {}", imported.dir, ec.message()));
  std::vector<StartingKernel> starting;
  try {
    starting = StartingKernels(answer.value("op", json()), signature, answer.at("inputs").size(),
                               answer.at("parameters").size(), TorchHelpersDir() + "/templates");
  } catch (const std::runtime_error& e) {
    Fail(problem, e.what());
  }
  for (const StartingKernel& k : starting) {
    std::ofstream f(fs::path(imported.dir) / k.file);
    f << k.text;
    if (!f) Fail(problem, fmt::format("cannot write {}/{}", imported.dir, k.file));
  }
  {
    std::ofstream f(fs::path(imported.dir) / "task.toml.tmp");
    f << toml;
    if (!f) Fail(problem, fmt::format("cannot write {}/task.toml", imported.dir));
  }
  fs::rename(fs::path(imported.dir) / "task.toml.tmp", fs::path(imported.dir) / "task.toml", ec);
  if (ec) Fail(problem, fmt::format("cannot write {}/task.toml: {}", imported.dir, ec.message()));
  LoadTask(imported.dir);  // what was written must load; an InputError here names task.toml
  return imported;
}

}  // namespace kf
