"""The session factory's settings (conf/spark-defaults.yaml) and the live session."""

from __future__ import annotations


def test_sessions_keep_their_generated_classes(spark):
    """A session keeps 2,000 generated classes (Spark's default 100 made a long session
    compile its stages' ~160 classes again every round); the tests' shared sessions keep
    more (conftest.SMALL_DATA_SQL). A static setting: fixed when the session starts."""
    from lassi.core.spark import _settings

    assert _settings(None, False)["spark.sql.codegen.cache.maxEntries"] == "2000"
    assert _settings(None, True)["spark.sql.codegen.cache.maxEntries"] == "2000"
    assert int(spark.conf.get("spark.sql.codegen.cache.maxEntries")) >= 2000
    assert not spark.conf.isModifiable("spark.sql.codegen.cache.maxEntries")
    assert spark.conf.get("spark.sql.session.timeZone") == "UTC"


def test_the_driver_jvm_compiles_with_c2_at_three_times_its_thresholds(spark):
    """The driver JVM that lassi starts runs with conf/spark-defaults.yaml's Java options:
    C2's invocation thresholds at 3x HotSpot's defaults (5000, 600, 15000) and the parallel
    collector, read back from the live JVM; the time zone option stays."""
    from lassi.core.spark import _settings

    options = _settings(None, False)["spark.driver.extraJavaOptions"].split()
    assert options[0] == "-Duser.timezone=UTC"
    jvm = spark._jvm
    bean = jvm.java.lang.management.ManagementFactory.getPlatformMXBean(
        jvm.java.lang.Class.forName("com.sun.management.HotSpotDiagnosticMXBean"))
    got = {k: int(bean.getVMOption(k).getValue()) for k in
           ("Tier4InvocationThreshold", "Tier4MinInvocationThreshold", "Tier4CompileThreshold")}
    assert got == {"Tier4InvocationThreshold": 15000, "Tier4MinInvocationThreshold": 1800,
                   "Tier4CompileThreshold": 45000}
    assert "-XX:+UseParallelGC" in options
    assert bean.getVMOption("UseParallelGC").getValue() == "true"
    assert jvm.java.lang.System.getProperty("user.timezone") == "UTC"
