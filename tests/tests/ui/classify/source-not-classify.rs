use retrykit_core::Classify;

#[derive(Debug, Classify)]
enum FetchError {
    #[classify(source)]
    Parse(std::num::ParseIntError),
}

fn main() {}
