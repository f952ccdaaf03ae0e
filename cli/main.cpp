// mlasim: plan, predict and validate persistent MLA decode split policies.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <exception>
#include <string>

#include "commands.h"
#include "mlasim/model/input_error.h"

int main(int argc, char** argv) {
  CLI::App app{"mlasim: plans, predictions and measurements of MLA decode split policies"};
  app.require_subcommand(1);
  mlasim::cli::add_plan_command(app);
  mlasim::cli::add_predict_command(app);
  mlasim::cli::add_compare_command(app);
  mlasim::cli::add_sweep_command(app);
  mlasim::cli::add_calibrate_command(app);
  mlasim::cli::add_report_command(app);
  mlasim::cli::add_policies_command(app);
  mlasim::cli::add_buffers_command(app);
  mlasim::cli::add_step_command(app);
  std::string command_line = "mlasim";
  for (int i = 1; i < argc; ++i) command_line += std::string(" ") + argv[i];
  mlasim::cli::add_validate_command(app, command_line);
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp&) {
    return app.exit(CLI::CallForHelp());
  } catch (const CLI::CallForAllHelp&) {
    return app.exit(CLI::CallForAllHelp());
  } catch (const CLI::ParseError& e) {
    std::fprintf(stderr, "mlasim: error: %s\n", e.what());
    return 2;
  } catch (const mlasim::InputError& e) {
    std::fprintf(stderr, "mlasim: error: %s\n", e.what());
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "mlasim: internal error: %s\n", e.what());
    return 1;
  }
  return 0;
}
