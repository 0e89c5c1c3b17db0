// farmctl up: start a local farm (coordinator + N workers on loopback) in the background.
#include <filesystem>
#include <iostream>

#include "absl/strings/str_cat.h"
#include "cli/command_support.h"
#include "cli/local_farm.h"

namespace farm::cli {

void AddUpCommand(CLI::App& app, CliContext& ctx) {
  auto* cmd = app.add_subcommand("up", "start a local farm: a coordinator and workers on loopback");
  static LocalFarmOptions options;
  options.data_dir = DefaultLocalFarmDir();
  cmd->add_option("--workers", options.workers, "number of workers")->capture_default_str();
  cmd->add_option("--data-dir", options.data_dir, "where the farm keeps state, logs and token")
      ->capture_default_str();
  cmd->add_option("--listen", options.listen, "coordinator gRPC address (port 0: any free)")
      ->capture_default_str();
  cmd->add_option("--http-listen", options.http_listen, "coordinator HTTP address")
      ->capture_default_str();
  cmd->add_option("--worker-timeout", options.worker_timeout, "silence before a worker is lost")
      ->capture_default_str();
  cmd->add_option("--slots", options.slots_per_worker,
                  "slots per worker (default: this machine's slots shared among the workers)");
  cmd->add_flag("--tls", options.tls,
                "make a CA for this farm (<data-dir>/tls) and run it over TLS: mutual TLS for "
                "gRPC, HTTPS for the dashboard and index");
  cmd->callback([&ctx, cmd] {
    options.data_dir = std::filesystem::absolute(options.data_dir).lexically_normal().string();
    options.listen_given = cmd->count("--listen") > 0;
    options.http_listen_given = cmd->count("--http-listen") > 0;
    auto started = StartLocalFarm(options);
    if (!started.ok()) {
      ctx.exit_code = Fail(started.status());
      return;
    }
    const LocalFarmRecord& r = started->record;
    for (const std::string& note : started->notes) std::cerr << "farmctl up: " << note << "\n";
    if (ctx.global.json) {
      nlohmann::json procs = nlohmann::json::array();
      for (const auto& p : r.processes) {
        procs.push_back({{"role", p.role}, {"name", p.name}, {"pid", p.pid}});
      }
      PrintJson({{"data_dir", r.data_dir},
                 {"grpc", r.grpc_address},
                 {"http", r.http_address},
                 {"token_file", r.token_file},
                 {"tls_ca", r.tls.ca_file},
                 {"already_running", started->already_running},
                 {"notes", started->notes},
                 {"current", started->current_dir == r.data_dir},
                 {"processes", procs}});
      return;
    }
    const bool tls = !r.tls.ca_file.empty();
    std::cout << (started->already_running ? "local farm already running" : "local farm up")
              << ": coordinator " << r.grpc_address << (tls ? " (mutual TLS)" : "") << ", "
              << (r.processes.size() - 1) << " worker(s)\n"
              << "  metrics    "
              << (r.http_address.empty()
                      ? "disabled"
                      : absl::StrCat(tls ? "https://" : "http://", r.http_address, "/metrics"))
              << "\n"
              << "  data dir   " << r.data_dir << "\n"
              << "  token      " << r.token_file << "\n";
    if (tls) std::cout << "  CA         " << r.tls.ca_file << "\n";
    std::cout << "  logs       " << r.data_dir << "/logs\n"
              << (started->current_dir == r.data_dir
                      ? "farmctl and farm-nvcc find this farm without flags: try 'farmctl "
                        "workers'.\n"
                      : absl::StrCat("The current local farm stays ", started->current_dir,
                                     " (still running): farmctl and farm-nvcc without flags "
                                     "keep talking to it. Reach this one with --farm-dir ",
                                     r.data_dir, " or FARM_DIR=", r.data_dir, ".\n"))
              << "Other clients: FARM_COORDINATOR=" << r.grpc_address
              << " FARM_TOKEN_FILE=" << r.token_file;
    if (tls) {
      std::cout << " FARM_TLS_CA=" << r.tls.ca_file << " FARM_TLS_CERT=" << r.tls.cert_file
                << " FARM_TLS_KEY=" << r.tls.key_file << "\n"
                << "pip: --index-url https://" << r.http_address << "/simple/ --cert "
                << r.tls.ca_file;
    }
    std::cout << "\n"
              << "Stop it with 'farmctl down"
              << (started->current_dir == r.data_dir ? "" : " --data-dir " + r.data_dir) << "'.\n";
  });
}

}  // namespace farm::cli
