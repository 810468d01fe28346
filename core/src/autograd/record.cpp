#include <autograd/record.h>

#include <backplane/error.h>

#include <string>

namespace bp::autograd::detail {

void refuse_no_formula(std::string_view op) {
  throw Error(ErrorCode::NotImplemented,
              "'" + std::string(op) +
                  "' has no derivative formula in core/ops/derivatives.yaml, so it cannot take "
                  "inputs that require grad: add its entry there, or call it under "
                  "bp::NoGradGuard or on detach()ed inputs if no gradient should flow through it");
}

}  // namespace bp::autograd::detail
