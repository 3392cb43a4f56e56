use retrykit_core::Classify;

#[derive(Debug, Classify)]
enum FetchError {
    #[classify(class = "permanent")]
    NotFound,
}

fn main() {}
