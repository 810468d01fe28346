// The op support page (bp-codegen ops-support) for a small ops.yaml and two backends: a row per
// kernel op with its dtypes by name and a mark per backend, the composites apart, a count per
// backend; and the mistakes it refuses.
#include "backend_loader.h"
#include "gen_ops_support.h"
#include "test_support.h"
#include "yaml_loader.h"

using namespace bp::codegen;
using namespace bp::codegen::testing;

namespace {

constexpr const char* kOps =
    R"(- func: add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor
  variants: function, method
  structured_delegate: add.out
- func: add_.Tensor(Tensor(a!) self, Tensor other, *, Scalar alpha=1) -> Tensor(a!)
  variants: method
  structured_delegate: add.out
- func: add.out(Tensor self, Tensor other, *, Scalar alpha=1, Tensor(a!) out) -> Tensor(a!)
  structured: true
  dtypes: all
  pointwise: true
  meta: binary_with_alpha
- func: add.Scalar(Tensor self, Scalar other, Scalar alpha=1) -> Tensor
  composite: true
- func: neg.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)
  structured: true
  dtypes: all_but_bool
  dtypes_of: self
- func: gelu.out(Tensor self, *, str approximate='none', Tensor(a!) out) -> Tensor(a!)
  structured: true
  dtypes: floating
- func: relu(Tensor self) -> Tensor
  composite: true
)";

constexpr const char* kFirstBackend =
    "backend: First\ncpp_namespace: first\nsupported: [gelu.out, add.out, neg.out]\n";
constexpr const char* kSecondBackend =
    "backend: Second\ncpp_namespace: second\nsupported: [add.out]\n";

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

}  // namespace

TEST_CASE("ops-support: a row per kernel op, in ops.yaml order, with dtypes and backends") {
  const NativeFunctions ops = parse_native_functions(kOps, "ops.yaml");
  const std::vector<BackendConfig> backends = {
      parse_backend_config(kFirstBackend, "first.yaml", ops),
      parse_backend_config(kSecondBackend, "second.yaml", ops)};
  const std::string page = generate_ops_support_md(ops, backends);
  CAPTURE(page);

  CHECK(contains(page, "- `ops.yaml`\n- `first.yaml`\n- `second.yaml`\n"));
  CHECK(contains(page, "make ops-support"));
  CHECK(contains(page,
                 "- First (`first.yaml`): 3 of 3 kernel ops.\n"
                 "- Second (`second.yaml`): 1 of 3 kernel ops.\n"));
  CHECK(contains(page,
                 "| Op | Dtypes | Argument | Also runs | First | Second |\n"
                 "| --- | --- | --- | --- | --- | --- |\n"
                 "| `add.out` | Float32, Float64, Float16, BFloat16, Int8, UInt8, Int32, "
                 "Int64, Bool | `out` | `add.Tensor`, `add_.Tensor` | ✓ | ✓ |\n"
                 "| `neg.out` | Float32, Float64, Float16, BFloat16, Int8, UInt8, Int32, "
                 "Int64 | `self` |  | ✓ | — |\n"
                 "| `gelu.out` | Float32, Float64, Float16, BFloat16 | `out` |  | ✓ | — |\n"));
  // The composites are listed apart, in ops.yaml order, and are no rows of the table.
  CHECK(contains(page, "\n- `add.Scalar`\n- `relu`\n"));
  CHECK_FALSE(contains(page, "| `relu`"));
}

TEST_CASE("ops-support: no backend, or one backend named twice, is refused") {
  const NativeFunctions ops = parse_native_functions(kOps, "ops.yaml");
  CHECK(error_of([&] { generate_ops_support_md(ops, {}); }) ==
        "ops.yaml: error: the op support page needs at least one backend YAML (--backend)");
  const std::vector<BackendConfig> twice = {parse_backend_config(kFirstBackend, "a.yaml", ops),
                                            parse_backend_config(kFirstBackend, "b.yaml", ops)};
  CHECK(error_of([&] { generate_ops_support_md(ops, twice); }) ==
        "b.yaml: error: backend 'First' is also named by a.yaml: give each backend once");
}

TEST_CASE("ops-support: the command writes the page from repeated --backend options") {
  TempDir dir;
  const std::string ops = dir.file("ops.yaml", kOps);
  const std::string first = dir.file("first.yaml", kFirstBackend);
  const std::string second = dir.file("second.yaml", kSecondBackend);
  const std::string page = (dir / "docs" / "ops-support.md").string();
  CliResult result = run_codegen(
      {"ops-support", "--ops", ops, "--backend", second, "--backend", first, "--output", page});
  CHECK(result.err == "");
  REQUIRE(result.status == 0);
  // The columns follow the options' order.
  CHECK(contains(read_file(page), "| Also runs | Second | First |\n"));

  result = run_codegen({"ops-support", "--ops", ops, "--output", page});
  CHECK(result.status == kExitUsage);
  CHECK(result.err.starts_with("bp-codegen: missing option '--backend'\n"));
  result = run_codegen(
      {"ops-support", "--ops", ops, "--backend", first, "--output", page, "--output", page});
  CHECK(result.status == kExitUsage);
  CHECK(result.err.starts_with("bp-codegen: option '--output' is given twice\n"));
}
