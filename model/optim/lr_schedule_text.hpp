// A learning-rate schedule's text form, as --lr-schedule takes it:
//   KIND[:NAME=VALUE,...]   constant | step | exponential | cosine
// e.g. "step:every=1000,factor=0.5", "exponential:decay_steps=1000,
// decay_rate=0.96,staircase", "cosine:decay_steps=10000,alpha=0,
// warmup_steps=500,warmup_target=0.001". to_setting_text writes it back.
#pragma once

#include <string>

#include "common/expected.hpp"
#include "common/optimizer_config.hpp"

namespace troupe::detail {

/// Reads a schedule's text form: a known kind, then only that kind's
/// parameters, each once, with a value of its type (a flag such as
/// staircase may stand alone for true). Parameters left out keep
/// lr_schedule's defaults; whether the values make sense is
/// refuse_lr_schedule's call (lr_schedule.hpp).
expected<lr_schedule> parse_lr_schedule(const std::string& text);

} // namespace troupe::detail
