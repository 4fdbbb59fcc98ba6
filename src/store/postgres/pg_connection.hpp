#pragma once
// One libpq connection, its results and transactions as small RAII values: statements with
// text parameters ($1, $2, ...; std::nullopt is NULL), a failed statement throws PgError with the
// server's message (never the connection's password: libpq does not put it in messages).

#include <libpq-fe.h>

#include <initializer_list>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>

namespace kf {

// "STORE: what the server or libpq said"; detail() is the second part alone.
class PgError : public std::runtime_error {
 public:
  PgError(const std::string& store, const std::string& detail)
      : std::runtime_error(store + ": " + detail), detail_(detail) {}
  const std::string& detail() const { return detail_; }

 private:
  std::string detail_;
};

using PgParam = std::optional<std::string>;

class PgResult {
 public:
  explicit PgResult(PGresult* r) : result_(r, &PQclear) {}
  int rows() const { return PQntuples(result_.get()); }
  bool null(int row, int col) const { return PQgetisnull(result_.get(), row, col) != 0; }
  std::string text(int row, int col) const { return PQgetvalue(result_.get(), row, col); }
  long long int64(int row, int col) const { return std::stoll(text(row, col)); }
  double real(int row, int col) const { return std::stod(text(row, col)); }
  bool boolean(int row, int col) const { return text(row, col) == "t"; }
  // Rows an INSERT or UPDATE wrote.
  long long affected() const;
  PGresult* get() const { return result_.get(); }

 private:
  std::unique_ptr<PGresult, decltype(&PQclear)> result_;
};

class PgConnection {
 public:
  // `url` is a postgresql:// URL; `printable` names it in messages (redacted).
  PgConnection(const std::string& url, std::string printable);
  PgResult Exec(const std::string& sql, std::initializer_list<PgParam> params = {});
  // Several statements in one string, no parameters (migrations).
  void ExecScript(const std::string& sql);
  const std::string& printable() const { return printable_; }

 private:
  std::unique_ptr<PGconn, decltype(&PQfinish)> conn_;
  std::string printable_;
};

// BEGIN now; COMMIT on commit() (which returns once the server says the commit is durable);
// ROLLBACK if destroyed before.
class PgTransaction {
 public:
  explicit PgTransaction(PgConnection& c) : conn_(c) { conn_.Exec("BEGIN"); }
  ~PgTransaction();
  PgTransaction(const PgTransaction&) = delete;
  PgTransaction& operator=(const PgTransaction&) = delete;
  void commit() {
    conn_.Exec("COMMIT");
    done_ = true;
  }

 private:
  PgConnection& conn_;
  bool done_ = false;
};

}  // namespace kf
