// `iogate webhook`: flags → WebhookOptions → run_webhook (webhook/webhook.h).
#pragma once

#include <string>
#include <vector>

#include "base/result.h"
#include "webhook/webhook.h"

namespace iogate {

Result<WebhookOptions> parse_webhook_args(const std::vector<std::string>& args, std::string* help_text);
int run_webhook_command(const std::vector<std::string>& args);

}  // namespace iogate
