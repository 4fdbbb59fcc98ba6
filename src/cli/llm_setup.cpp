#include "cli/llm_setup.hpp"

namespace kf {

namespace {

// The store as the journal of a run's prompt component versions.
class StorePromptJournal : public PromptJournal {
 public:
  StorePromptJournal(Store& store, std::string run) : store_(store), run_(std::move(run)) {}

  void Record(const Component& c, const nlohmann::json& meta) override {
    PromptVersionRecord v;
    v.component = c.id;
    v.version = c.version;
    v.parent_version = c.parent_version;
    v.made_by = c.made_by;
    v.text = c.text;
    v.stats = {{"uses", c.stats.uses},
               {"improvements", c.stats.improvements},
               {"credit", c.stats.credit},
               {"gain", c.stats.gain}};
    v.meta = meta.is_object() ? meta : nlohmann::json::object();
    store_.PutPromptVersion(run_, v);
  }

  std::vector<Component> Stored() override {
    std::vector<Component> out;
    for (const PromptVersionRecord& v : store_.RunPromptVersions(run_)) {
      Component c;
      c.id = v.component;
      c.version = v.version;
      c.parent_version = v.parent_version;
      c.made_by = v.made_by;
      c.text = v.text;
      out.push_back(std::move(c));
    }
    return out;
  }

 private:
  Store& store_;
  std::string run_;
};

}  // namespace

std::unique_ptr<PromptJournal> MakeStorePromptJournal(Store& store, const std::string& run) {
  return std::make_unique<StorePromptJournal>(store, run);
}

}  // namespace kf
