use retrykit_core::Classify;

#[derive(Debug, Classify)]
struct Unavailable {
    host: String,
}

fn main() {}
