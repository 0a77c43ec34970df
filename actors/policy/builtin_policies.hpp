// The built-in update policies, one line each, in the order help lists them:
// a new policy adds its files and its line here (docs/architecture.md, "How
// to add a policy"). Each line names the function its .cpp defines,
// `policy_descriptor <name>_policy_descriptor()`.
#pragma once

#define TROUPE_BUILTIN_POLICIES(policy) \
  policy(sync)                          \
  policy(async)                         \
  policy(ssp)                           \
  policy(delayed)
