#pragma once
// Each subcommand registers its flags and its action on the app.
#include <CLI/CLI.hpp>
#include <string>

namespace mlasim::cli {

void add_plan_command(CLI::App& app);
void add_predict_command(CLI::App& app);
void add_compare_command(CLI::App& app);
void add_sweep_command(CLI::App& app);
void add_calibrate_command(CLI::App& app);
void add_report_command(CLI::App& app);
void add_policies_command(CLI::App& app);
void add_buffers_command(CLI::App& app);
void add_step_command(CLI::App& app);
// `command_line` is recorded in the measurement rows.
void add_validate_command(CLI::App& app, const std::string& command_line);

}  // namespace mlasim::cli
