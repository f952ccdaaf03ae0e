#pragma once
// Each subcommand registers its flags and its action on the app.
#include <CLI/CLI.hpp>

namespace mlasim::cli {

void add_plan_command(CLI::App& app);

}  // namespace mlasim::cli
