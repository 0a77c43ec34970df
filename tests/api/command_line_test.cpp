// A program's command line: its own options beside a fit's, flags bare or
// spelled out, and what --help shows.
#include <catch2/catch.hpp>

#include <cstdio>
#include <string>
#include <vector>

#include <troupe/troupe.hpp>

#include "captured_output.hpp"

namespace {

// Parses `args` (after the program's name) as `cli` would from main.
std::optional<int> parse(troupe::command_line& cli, std::vector<std::string> args) {
  args.insert(args.begin(), "program");
  std::vector<char*> argv;
  for (auto& arg : args)
    argv.push_back(arg.data());
  return cli.parse(static_cast<int>(argv.size()), argv.data());
}


} // namespace

TEST_CASE("a program's own options are read into its variables and never reach fit",
          "[api][command_line]") {
  troupe::command_line cli("program", "Tests its own options.");
  std::string name = "none";
  int64_t count = 3;
  double rate = 0.5;
  bool loud = false;
  cli.add_option("name", name, "a name")
    .add_option("count", count, "a count")
    .add_option("rate", rate, "a rate")
    .add_option("loud", loud, "a flag");
  REQUIRE_FALSE(parse(cli, {"--name=abc", "--count=7", "--epochs=2", "--rate=0.25", "--loud",
                            "--nesterov"}));
  CHECK(name == "abc");
  CHECK(count == 7);
  CHECK(rate == 0.25);
  CHECK(loud);
  CHECK(cli.options().names() == std::vector<std::string>{"epochs", "nesterov"});
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
  CHECK(cli.options().arguments() == std::vector<std::string>{"--epochs=2", "--nesterov=true"});
#pragma GCC diagnostic pop
}

TEST_CASE("a program's own option with a bad value is refused, and --help lists it",
          "[api][command_line]") {
  troupe::command_line bad("program", "Tests its own options.");
  int64_t count = 3;
  bad.add_option("count", count, "a count");
  CHECK(parse(bad, {"--count=many"}) == 2);

  troupe::command_line help("program", "Tests its own options.");
  std::string name = "none";
  help.add_option("name", name, "the thing to call it");
  std::optional<int> exit_code;
  const auto text = api_fixture::captured_output(
    "command_line_test_stdout.txt", false, [&] { exit_code = parse(help, {"--help"}); });
  CHECK(exit_code == 0);
  CHECK_THAT(text, Catch::Contains("This program"));
  CHECK_THAT(text, Catch::Contains("--name="));
  CHECK_THAT(text, Catch::Contains("the thing to call it"));
  CHECK(text.find("This program") < text.find("Training"));
}
