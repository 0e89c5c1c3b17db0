#include "coordinator/dashboard/api_routes.h"

#include <httplib.h>

#include <charconv>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "coordinator/builds/build_service.h"
#include "coordinator/dashboard/http_read_auth.h"

namespace farm::coordinator {
namespace {

int HttpStatusFor(absl::StatusCode code) {
  switch (code) {
    case absl::StatusCode::kInvalidArgument:
      return 400;
    case absl::StatusCode::kUnauthenticated:
      return 401;
    case absl::StatusCode::kPermissionDenied:
      return 403;
    case absl::StatusCode::kNotFound:
      return 404;
    case absl::StatusCode::kUnavailable:
      return 503;
    default:
      return 500;
  }
}

void ReplyError(httplib::Response& res, const absl::Status& status) {
  res.status = HttpStatusFor(status.code());
  // Built by hand so the message needs no proto; escape what JSON requires.
  std::string msg;
  for (char c : status.message()) {
    if (c == '"' || c == '\\') {
      msg += '\\';
      msg += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      absl::StrAppend(&msg, "\\u00", absl::Hex(static_cast<unsigned char>(c), absl::kZeroPad2));
    } else {
      msg += c;
    }
  }
  if (status.code() == absl::StatusCode::kUnauthenticated) {
    res.set_header("WWW-Authenticate", "Bearer");
  }
  res.set_content(absl::StrCat("{\"error\": \"", msg, "\", \"code\": \"",
                               absl::StatusCodeToString(status.code()), "\"}\n"),
                  "application/json");
}

void ReplyMessage(httplib::Response& res, const google::protobuf::Message& message) {
  std::string json;
  auto s = google::protobuf::util::MessageToJsonString(message, &json, ApiJsonOptions());
  if (!s.ok()) {
    ReplyError(res, absl::InternalError(absl::StrCat("cannot render JSON: ", s.ToString())));
    return;
  }
  res.set_header("Cache-Control", "no-store");
  res.set_content(json, "application/json");
}

template <typename T>
void Reply(httplib::Response& res, const absl::StatusOr<T>& answer) {
  if (answer.ok()) {
    ReplyMessage(res, *answer);
  } else {
    ReplyError(res, answer.status());
  }
}

// Unsigned query parameter; `fallback` when absent.
absl::StatusOr<uint64_t> UintParam(const httplib::Request& req, const char* name,
                                   uint64_t fallback) {
  if (!req.has_param(name)) return fallback;
  const std::string v = req.get_param_value(name);
  uint64_t out = 0;
  auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), out);
  if (ec != std::errc() || end != v.data() + v.size() || v.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("query parameter ", name, "='", v, "' is not a whole number"));
  }
  return out;
}

absl::StatusOr<farm::v1::ActionState> StateParam(const httplib::Request& req) {
  if (!req.has_param("state")) return farm::v1::ACTION_STATE_UNSPECIFIED;
  std::string v = absl::AsciiStrToUpper(req.get_param_value("state"));
  if (v.rfind("ACTION_STATE_", 0) != 0) v = "ACTION_STATE_" + v;
  farm::v1::ActionState state;
  if (!farm::v1::ActionState_Parse(v, &state)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "state='", req.get_param_value("state"),
        "' is not an action state. Fix: use queued, running, completed, failed or cancelled"));
  }
  return state;
}

}  // namespace

google::protobuf::util::JsonPrintOptions ApiJsonOptions() {
  google::protobuf::util::JsonPrintOptions o;
  o.preserve_proto_field_names = true;
  o.always_print_primitive_fields = true;
  return o;
}

ApiRoutes::ApiRoutes(const FarmStatusSource* farm, const BuildRegistry* builds,
                     const TokenVerifier* auth)
    : farm_(farm), builds_(builds), auth_(auth) {}

void ApiRoutes::RegisterRoutes(httplib::Server& server, bool loopback) {
  const HttpReadAuth auth(auth_, loopback);
  const FarmStatusSource* farm = farm_;
  const BuildRegistry* builds = builds_;
  // Every handler checks the reader first.
  auto guarded = [auth](auto handler) {
    return [auth, handler](const httplib::Request& req, httplib::Response& res) {
      if (absl::Status s = auth.Check(req); !s.ok()) {
        ReplyError(res, s);
        return;
      }
      handler(req, res);
    };
  };

  server.Get("/api/v1/status", guarded([farm](const httplib::Request&, httplib::Response& res) {
               ReplyMessage(res, farm->Status());
             }));
  server.Get("/api/v1/workers", guarded([farm](const httplib::Request&, httplib::Response& res) {
               ReplyMessage(res, farm->Workers());
             }));
  server.Get("/api/v1/actions",
             guarded([builds](const httplib::Request& req, httplib::Response& res) {
               farm::v1::ListActionsRequest r;
               auto state = StateParam(req);
               auto limit = UintParam(req, "limit", 0);
               if (!state.ok() || !limit.ok()) {
                 ReplyError(res, !state.ok() ? state.status() : limit.status());
                 return;
               }
               r.set_state(*state);
               r.set_limit(static_cast<uint32_t>(std::min<uint64_t>(*limit, UINT32_MAX)));
               Reply(res, AnswerListActions(*builds, r));
             }));
  server.Get("/api/v1/builds",
             guarded([builds](const httplib::Request& req, httplib::Response& res) {
               auto limit = UintParam(req, "limit", 0);
               if (!limit.ok()) {
                 ReplyError(res, limit.status());
                 return;
               }
               farm::v1::ListBuildsRequest r;
               r.set_limit(static_cast<uint32_t>(std::min<uint64_t>(*limit, UINT32_MAX)));
               Reply(res, AnswerListBuilds(*builds, r));
             }));
  server.Get(R"(/api/v1/builds/([^/]+))",
             guarded([builds](const httplib::Request& req, httplib::Response& res) {
               Reply(res, builds->Get(req.matches[1]));
             }));
  server.Get(R"(/api/v1/builds/([^/]+)/actions)",
             guarded([builds](const httplib::Request& req, httplib::Response& res) {
               farm::v1::ListActionsRequest r;
               r.set_build_id(req.matches[1]);
               auto state = StateParam(req);
               auto limit = UintParam(req, "limit", 0);
               if (!state.ok() || !limit.ok()) {
                 ReplyError(res, !state.ok() ? state.status() : limit.status());
                 return;
               }
               r.set_state(*state);
               r.set_limit(static_cast<uint32_t>(std::min<uint64_t>(*limit, UINT32_MAX)));
               Reply(res, AnswerListActions(*builds, r));
             }));
  server.Get(R"(/api/v1/builds/([^/]+)/logs)",
             guarded([builds](const httplib::Request& req, httplib::Response& res) {
               auto offset = UintParam(req, "offset", 0);
               auto max = UintParam(req, "max_bytes", 0);
               if (!offset.ok() || !max.ok()) {
                 ReplyError(res, !offset.ok() ? offset.status() : max.status());
                 return;
               }
               farm::v1::GetBuildLogsRequest r;
               r.set_build_id(req.matches[1]);
               r.set_offset(*offset);
               r.set_max_bytes(static_cast<uint32_t>(std::min<uint64_t>(*max, UINT32_MAX)));
               Reply(res, AnswerGetBuildLogs(*builds, r));
             }));
  // Anything else under the API is a clear 404, not the dashboard page.
  server.Get(R"(/api/.*)", [](const httplib::Request& req, httplib::Response& res) {
    ReplyError(res, absl::NotFoundError(absl::StrCat("no API endpoint ", req.path,
                                                     ". Fix: see /api/v1/ in docs/using.md")));
  });
}

}  // namespace farm::coordinator
