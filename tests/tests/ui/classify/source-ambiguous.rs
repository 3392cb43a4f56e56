use retrykit_core::Classify;

#[derive(Debug, Classify)]
enum FetchError {
    #[classify(source)]
    Io(std::io::Error, std::io::Error),
}

fn main() {}
