#pragma once
// Each subcommand registers its flags and its action on the app.
#include <CLI/CLI.hpp>

namespace mlasim::cli {

void add_plan_command(CLI::App& app);
void add_predict_command(CLI::App& app);
void add_compare_command(CLI::App& app);
void add_sweep_command(CLI::App& app);
void add_calibrate_command(CLI::App& app);
void add_report_command(CLI::App& app);
void add_policies_command(CLI::App& app);

}  // namespace mlasim::cli
