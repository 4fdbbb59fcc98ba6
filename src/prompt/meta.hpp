#pragma once
// The meta step of prompt evolution: every so many proposals, the weakest prompt component (the
// lowest mean credit among those used often enough) is shown to the model with its statistics,
// the strongest components for contrast, and recent failures, and the model rewrites it with
// SEARCH/REPLACE blocks on its text. The rewrite becomes the component's next version.

#include <string>
#include <vector>

#include "prompt/assemble.hpp"
#include "prompt/library.hpp"
#include "prompt/search_replace.hpp"

namespace kf {

// The component to rewrite, or nullptr when none has been used `min_uses` times.
const Component* WeakestComponent(const PromptLibrary& library, int min_uses);

ChatPrompt MetaPrompt(const Component& weakest, const PromptLibrary& library,
                      const std::vector<std::string>& recent_failures);

// The component's text with the reply's SEARCH/REPLACE blocks applied; an error when the reply
// holds no block, a block does not apply, or the text would come out empty or unchanged.
EditResult ApplyMetaReply(const Component& component, const std::string& reply);

}  // namespace kf
