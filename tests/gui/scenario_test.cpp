// Scenario files: JSON round trips, seeded random batches, and errors that name the field.
#include <QDir>
#include <QFile>
#include <QTest>
#include <algorithm>

#include "gui_test_support.h"
#include "mlasim/gui/scenario.h"
#include "mlasim/model/input_error.h"

using namespace mlasim;
using namespace mlasim::gui;
using nlohmann::json;

class ScenarioTest : public QObject {
  Q_OBJECT

 private:
  static QString message_of(const json& j) {
    try {
      scenario_from_json(j);
    } catch (const InputError& e) {
      return QString::fromUtf8(e.what());
    }
    return {};
  }

 private slots:
  void the_readme_scenario_reads_as_documented() {
    const Scenario s = load_scenario(testing::readme_scenario_path());
    QCOMPARE(s.workload.gpu, std::string("mi355x"));
    QCOMPARE(s.workload.batch.lengths(), std::vector<int>(4, 100000));
    QCOMPARE(s.workload.heads, 16);
    QCOMPARE(s.workload.q_dtype, DType::fp8);
    QCOMPARE(s.workload.kv_dtype, DType::fp8);
    QCOMPARE(s.policies[0], std::string("aiter-v1:max_split_per_batch=16"));
    QCOMPARE(s.policies[1], std::string("aiter-v1:max_split_per_batch=-1"));
  }

  void json_round_trip_data() {
    QTest::addColumn<int>("kind");
    QTest::newRow("uniform") << 0;
    QTest::newRow("list") << 1;
    QTest::newRow("random uniform") << 2;
    QTest::newRow("random lognormal") << 3;
  }
  void json_round_trip() {
    QFETCH(int, kind);
    Scenario s;
    s.name = "round trip";
    s.workload.gpu = "mi300x";
    s.workload.heads = 128;
    s.workload.qlen = 2;
    s.workload.page_size = 64;
    s.workload.clusters = 200;
    s.workload.kv_dtype = DType::bf16;
    s.policies = {"aiter-v1-adaptive:rule=width", "aiter-v1:max_split_per_batch=8"};
    if (kind == 1) {
      s.workload.batch.kind = BatchSpec::Kind::list;
      s.workload.batch.kv_lens = {100000, 2000, 500};
    } else if (kind >= 2) {
      s.workload.batch.kind = BatchSpec::Kind::random;
      s.workload.batch.count = 64;
      s.workload.batch.seed = 7;
      if (kind == 3) {
        s.workload.batch.distribution = BatchSpec::Distribution::lognormal;
        s.workload.batch.median_context = 4000;
        s.workload.batch.sigma = 0.75;
      }
    }
    QVERIFY(testing::same_json(scenario_to_json(scenario_from_json(scenario_to_json(s))), scenario_to_json(s)));
    const QString path = testing::output_path(QStringLiteral("round_trip_%1.json").arg(kind));
    save_scenario(s, path.toStdString());
    QVERIFY(load_scenario(path.toStdString()) == s);
  }

  void a_seed_fixes_the_lengths() {
    BatchSpec b;
    b.kind = BatchSpec::Kind::random;
    b.count = 1000;
    b.min_context = 100;
    b.max_context = 5000;
    const std::vector<int> first = b.lengths();
    QCOMPARE(b.lengths(), first);
    QVERIFY(*std::min_element(first.begin(), first.end()) >= 100);
    QVERIFY(*std::max_element(first.begin(), first.end()) <= 5000);
    b.seed = 2;
    QVERIFY(b.lengths() != first);
  }

  void lognormal_lengths_centre_on_the_median() {
    BatchSpec b;
    b.kind = BatchSpec::Kind::random;
    b.distribution = BatchSpec::Distribution::lognormal;
    b.count = 4001;
    b.min_context = 1;
    b.max_context = 1 << 30;
    b.median_context = 8000;
    b.sigma = 1.0;
    std::vector<int> lens = b.lengths();
    std::nth_element(lens.begin(), lens.begin() + 2000, lens.end());
    QVERIFY2(lens[2000] > 7000 && lens[2000] < 9000, qPrintable(QString::number(lens[2000])));
  }

  void errors_name_the_field_data() {
    QTest::addColumn<QString>("text");
    QTest::addColumn<QString>("expected");
    QTest::newRow("unknown top key") << R"({"derived": {}, "workload": {}, "policies": {"A": "x", "B": "y"}})"
                                     << "derived: is not a scenario field here";
    QTest::newRow("no workload") << R"({"policies": {"A": "aiter-v1", "B": "aiter-v1"}})" << "workload: is missing";
    QTest::newRow("no policies") << R"({"workload": {}})" << "policies: is missing";
    QTest::newRow("empty policy") << R"({"workload": {}, "policies": {"A": "", "B": "aiter-v1"}})"
                                  << "policies.A: must be a policy spec";
    QTest::newRow("zero requests") << R"({"workload": {"batch": {"kind": "uniform", "count": 0}}, "policies": {"A": "a", "B": "b"}})"
                                   << "workload.batch.count: must be 1..65536, got 0";
    QTest::newRow("bad kind") << R"({"workload": {"batch": {"kind": "zipf"}}, "policies": {"A": "a", "B": "b"}})"
                              << "workload.batch.kind: must be uniform, list or random, got 'zipf'";
    QTest::newRow("field of another kind") << R"({"workload": {"batch": {"kind": "list", "kv_lens": [5], "count": 3}}, "policies": {"A": "a", "B": "b"}})"
                                           << "workload.batch.count: is not a scenario field here";
    QTest::newRow("bad length") << R"({"workload": {"batch": {"kind": "list", "kv_lens": [5, -1]}}, "policies": {"A": "a", "B": "b"}})"
                                << "workload.batch.kv_lens: entry 1 must be an integer";
    QTest::newRow("min above max") << R"({"workload": {"batch": {"kind": "random", "min_context": 10, "max_context": 5}}, "policies": {"A": "a", "B": "b"}})"
                                   << "workload.batch.max_context: must be >= min_context (10), got 5";
    QTest::newRow("heads as text") << R"({"workload": {"heads": "16"}, "policies": {"A": "a", "B": "b"}})"
                                   << "workload.heads: must be an integer";
    QTest::newRow("bad dtype") << R"({"workload": {"kv_dtype": "fp4"}, "policies": {"A": "a", "B": "b"}})"
                               << "workload.kv_dtype";
    QTest::newRow("not an object") << "[1, 2]" << "scenario: must be a JSON object";
  }
  void errors_name_the_field() {
    QFETCH(QString, text);
    QFETCH(QString, expected);
    const QString message = message_of(json::parse(text.toStdString()));
    QVERIFY2(message.startsWith(expected), qPrintable(message));
  }

  void a_file_that_is_not_json_names_the_file() {
    const QString path = testing::output_path(QStringLiteral("not_json.json"));
    QFile f(path);
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write("{\"workload\": ");
    f.close();
    try {
      load_scenario(path.toStdString());
      QFAIL("no error");
    } catch (const InputError& e) {
      QVERIFY(QString::fromUtf8(e.what()).startsWith(QStringLiteral("scenario: ") + path + ": not valid JSON"));
    }
  }

  void a_missing_file_is_an_input_error() {
    QVERIFY_THROWS_EXCEPTION(InputError, load_scenario("/nonexistent/scenario.json"));
  }

  void saving_where_it_cannot_leaves_no_file() {
    QVERIFY_THROWS_EXCEPTION(InputError, save_scenario(Scenario{}, "/nonexistent/dir/s.json"));
  }

  // Every example in data/scenarios reads, and both of its policies plan and simulate on its workload.
  void every_example_scenario_plans() {
    const QDir dir(QStringLiteral(MLASIM_DATA_DIR "/scenarios"));
    const auto files = dir.entryInfoList({QStringLiteral("*.json")}, QDir::Files);
    QVERIFY(files.size() >= 3);
    for (const QFileInfo& info : files) {
      const Scenario s = load_scenario(info.filePath().toStdString());
      QVERIFY2(!s.name.empty() && !s.description.empty(), qPrintable(info.fileName()));
      const testing::Sides sides = testing::evaluate(s);
      QVERIFY2(sides.a.prediction->metrics.kernel_us > 0, qPrintable(info.fileName()));
      QVERIFY2(sides.b.prediction->metrics.kernel_us > 0, qPrintable(info.fileName()));
    }
  }
};

QTEST_MAIN(ScenarioTest)
#include "scenario_test.moc"
