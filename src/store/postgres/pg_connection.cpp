#include "store/postgres/pg_connection.hpp"

#include <string_view>
#include <utility>
#include <vector>

namespace kf {

namespace {

std::string Trimmed(const char* message) {
  std::string_view m = message ? message : "";
  while (!m.empty() && (m.back() == '\n' || m.back() == ' ')) m.remove_suffix(1);
  return std::string(m);
}

}  // namespace

long long PgResult::affected() const {
  const char* n = PQcmdTuples(result_.get());
  return n && *n ? std::stoll(n) : 0;
}

PgConnection::PgConnection(const std::string& url, std::string printable)
    : conn_(PQconnectdb(url.c_str()), &PQfinish), printable_(std::move(printable)) {
  if (!conn_) throw PgError(printable_, "out of memory connecting");
  if (PQstatus(conn_.get()) != CONNECTION_OK)
    throw PgError(printable_, Trimmed(PQerrorMessage(conn_.get())));
  // Our own notices (CREATE TABLE IF NOT EXISTS ... skipping) are not the user's business.
  PQsetNoticeProcessor(
      conn_.get(), [](void*, const char*) {}, nullptr);
}

PgResult PgConnection::Exec(const std::string& sql, std::initializer_list<PgParam> params) {
  std::vector<const char*> values;
  values.reserve(params.size());
  for (const PgParam& p : params) values.push_back(p ? p->c_str() : nullptr);
  PgResult r(PQexecParams(conn_.get(), sql.c_str(), static_cast<int>(values.size()), nullptr,
                          values.data(), nullptr, nullptr, 0));
  ExecStatusType status = PQresultStatus(r.get());
  if (status != PGRES_COMMAND_OK && status != PGRES_TUPLES_OK)
    throw PgError(printable_, Trimmed(PQerrorMessage(conn_.get())));
  return r;
}

void PgConnection::ExecScript(const std::string& sql) {
  PgResult r(PQexec(conn_.get(), sql.c_str()));
  ExecStatusType status = PQresultStatus(r.get());
  if (status != PGRES_COMMAND_OK && status != PGRES_TUPLES_OK)
    throw PgError(printable_, Trimmed(PQerrorMessage(conn_.get())));
}

PgTransaction::~PgTransaction() {
  if (done_) return;
  try {
    conn_.Exec("ROLLBACK");
  } catch (const PgError&) {
    // the connection is gone: the server rolled back already
  }
}

}  // namespace kf
