// A thin RAII layer over the sqlite3 C API: a connection, prepared statements with typed binds and
// columns, and a transaction guard that rolls back unless committed. Every failure throws
// StoreError naming the database file and SQLite's message, so callers never check return codes.
// Used by fuzz_store.h; tested through tests/fuzz/fuzz_store_test.cpp.
#pragma once

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>

struct sqlite3;
struct sqlite3_stmt;

namespace gbc {

/// A database that cannot be opened, read or written (a user-visible condition: wrong path, full
/// disk, a file that is not a gbcheck store).
class StoreError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class SqliteDb;

class Statement {
 public:
  Statement(SqliteDb& db, const std::string& sql);
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;
  ~Statement();

  // Binds are 1-based, as in SQL's ?1, ?2, ...
  Statement& bind(int index, int64_t value);
  Statement& bind(int index, double value);
  Statement& bind(int index, const std::string& value);
  Statement& bind(int index, const char* value) { return bind(index, std::string(value)); }
  Statement& bind_null(int index);
  Statement& bind(int index, const std::optional<std::string>& value) {
    return value ? bind(index, *value) : bind_null(index);
  }

  /// Steps once: true while a row is available.
  bool step();
  /// Steps through a statement that returns no rows, then resets it for reuse.
  void run();
  void reset();

  int64_t int64(int column) const;
  double real(int column) const;
  std::string text(int column) const;  // "" for NULL
  bool is_null(int column) const;

 private:
  SqliteDb& db_;
  sqlite3_stmt* stmt_ = nullptr;
  std::string sql_;
};

class SqliteDb {
 public:
  /// Opens (creating it when `create`) the database at `path`. Throws StoreError.
  SqliteDb(const std::string& path, bool create);
  SqliteDb(const SqliteDb&) = delete;
  SqliteDb& operator=(const SqliteDb&) = delete;
  ~SqliteDb();

  /// Runs one or more statements that return no rows.
  void exec(const std::string& sql);
  /// The first column of the first row of `sql` (a count, a max), nullopt when there is no row or
  /// it is NULL.
  std::optional<int64_t> scalar(const std::string& sql);
  int64_t last_insert_id() const;
  int changes() const;
  const std::string& path() const { return path_; }
  sqlite3* handle() { return db_; }
  [[noreturn]] void fail(const std::string& what) const;

 private:
  sqlite3* db_ = nullptr;
  std::string path_;
};

/// BEGIN IMMEDIATE on construction (takes the write lock at once, so concurrent writers wait in
/// busy_timeout instead of failing on upgrade); ROLLBACK on destruction unless commit() ran.
class Transaction {
 public:
  explicit Transaction(SqliteDb& db);
  Transaction(const Transaction&) = delete;
  Transaction& operator=(const Transaction&) = delete;
  ~Transaction();
  void commit();

 private:
  SqliteDb& db_;
  bool done_ = false;
};

}  // namespace gbc
