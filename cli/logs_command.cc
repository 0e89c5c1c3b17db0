// farmctl logs ID [--follow] [--raw]: a build's log (the last 8 MiB the coordinator keeps);
// with --follow, keeps printing until the build is finished. A build can print terminal
// escapes, so control characters are shown escaped (libfarm/text/terminal_text.h) unless
// --raw asks for the bytes as they are, e.g. to save them to a file.
#include <iostream>
#include <thread>

#include "cli/build_follower.h"
#include "cli/build_view.h"
#include "cli/command_support.h"
#include "libfarm/client/build_client.h"
#include "libfarm/text/terminal_text.h"

namespace farm::cli {

void AddLogsCommand(CLI::App& app, CliContext& ctx) {
  auto* cmd = app.add_subcommand("logs", "print a build's log");
  auto id = std::make_shared<std::string>();
  auto follow = std::make_shared<bool>(false);
  auto raw = std::make_shared<bool>(false);
  cmd->add_option("ID", *id, "build id (see 'farmctl builds')")->required();
  cmd->add_flag("-f,--follow", *follow, "keep printing new output until the build finishes");
  cmd->add_flag("--raw", *raw,
                "print the log's bytes unchanged, terminal escapes included (for a file, not "
                "a terminal)");
  cmd->callback([&ctx, id, follow, raw] {
    auto client = BuildClient::Connect(ChoiceOf(ctx.global));
    if (!client.ok()) {
      ctx.exit_code = Fail(client.status());
      return;
    }
    uint64_t offset = 0;
    bool first = true;
    TerminalTextEscaper escaper;
    while (true) {
      absl::StatusOr<farm::v1::GetBuildLogsResponse> chunk;
      auto get = [&] {
        chunk = (*client)->GetBuildLogs(*id, offset);
        return chunk.status();
      };
      // Following, a coordinator restart is waited out once it has answered (see
      // RideOutCoordinatorRestart).
      if (absl::Status s = *follow && !first ? RideOutCoordinatorRestart(get) : get(); !s.ok()) {
        ctx.exit_code = Fail(s);
        return;
      }
      if (first && chunk->offset() > offset) {
        std::cerr << "farmctl: the log starts at byte " << chunk->offset()
                  << "; earlier output was dropped (the coordinator keeps the last 8 MiB)\n";
      }
      first = false;
      if (ctx.global.json) {
        // One object per chunk, so a reader can follow offsets.
        nlohmann::json j = ProtoToJson(*chunk);
        // `data` is base64 in the JSON mapping; `text` is the same bytes as readable text.
        j["text"] = nlohmann::json::parse(
            nlohmann::json(chunk->data())
                .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
        std::cout << j.dump() << std::endl;
      } else if (*raw) {
        std::cout << chunk->data() << std::flush;
      } else {
        std::cout << escaper.Feed(chunk->data()) << std::flush;
      }
      offset = chunk->next_offset();
      const bool more = !chunk->data().empty();
      if (more) continue;  // drain what is there before waiting
      if (!*follow || chunk->build_finished()) break;
      std::this_thread::sleep_for(std::chrono::seconds(1));
    }
    if (!ctx.global.json && !*raw) std::cout << escaper.Finish() << std::flush;
  });
}

}  // namespace farm::cli
