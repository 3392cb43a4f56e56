use retrykit_core::Classify;
use retrykit_core::chaos::InjectedFault;

#[derive(Debug, Classify)]
enum BrokerError {
    #[classify(permanent)]
    Rejected,
    #[classify(chaos, transient)]
    Injected(InjectedFault),
}

fn main() {}
