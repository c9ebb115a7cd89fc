//! A machine without PostgreSQL: the PostgreSQL tests say so in one line and return, except
//! in CI, where a missing PostgreSQL is a broken setup and fails them.

use crate::common::postgres_at;

#[tokio::test]
async fn without_postgresql_its_tests_skip_in_one_line_but_fail_in_ci() {
    // Nothing listens on port 1. The password must never reach the line.
    let nowhere = "postgres://postgres:hunter2@127.0.0.1:1/postgres";
    let skipped = match postgres_at(nowhere, false).await {
        Ok(Err(line)) => line,
        Ok(Ok(_)) => panic!("PostgreSQL on port 1?"),
        Err(why) => panic!("a machine without PostgreSQL failed the test: {why}"),
    };
    assert!(skipped.starts_with("skipped: no PostgreSQL"), "{skipped}");
    assert!(!skipped.contains('\n'), "more than one line: {skipped}");
    assert!(!skipped.contains("hunter2"), "{skipped}");
    let failed = match postgres_at(nowhere, true).await {
        Err(why) => why,
        Ok(_) => panic!("CI skipped the PostgreSQL tests"),
    };
    assert!(failed.contains("CI is set"), "{failed}");
    assert!(!failed.contains("hunter2"), "{failed}");
}

#[tokio::test]
async fn something_that_is_not_postgresql_fails_the_test_even_outside_ci() {
    // A server that accepts and hangs up: there is something, and it is broken.
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let hang_up = tokio::spawn(async move {
        while let Ok((socket, _)) = listener.accept().await {
            drop(socket);
        }
    });
    let url = format!("postgres://postgres@127.0.0.1:{port}/postgres");
    match postgres_at(&url, false).await {
        Err(why) => assert!(why.contains("no usable PostgreSQL"), "{why}"),
        Ok(Err(skipped)) => panic!("a broken PostgreSQL was skipped: {skipped}"),
        Ok(Ok(_)) => panic!("a socket that hangs up passed for PostgreSQL"),
    }
    hang_up.abort();
}
