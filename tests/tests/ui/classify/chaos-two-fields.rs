use retrykit_core::Classify;
use retrykit_core::chaos::InjectedFault;

#[derive(Debug, Classify)]
enum BrokerError {
    #[classify(transient)]
    Down,
    #[classify(chaos)]
    Injected(InjectedFault, u32),
}

fn main() {}
