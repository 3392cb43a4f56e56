use retrykit_core::retry;

struct Connection;

#[retry(policy = "db")]
async fn insert(conn: Connection, row: u32) -> Result<u32, std::io::Error> {
    let _ = conn;
    Ok(row)
}

fn main() {}
