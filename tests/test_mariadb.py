"""The test MariaDB is a real server on loopback, reached with pymysql."""

import pymysql


def test_mariadb_round_trip(mariadb):
    assert mariadb["host"] == "127.0.0.1"
    conn = pymysql.connect(**mariadb)
    with conn.cursor() as cur:
        cur.execute("CREATE TABLE t (ts INT, v BIGINT)")
        cur.executemany("INSERT INTO t VALUES (%s, %s)", [(1, 10), (2, 32)])
        cur.execute("SELECT SUM(v), VERSION() FROM t")
        total, version = cur.fetchone()
    conn.close()
    assert int(total) == 42 and "MariaDB" in version
