use retrykit_core::Classify;
use retrykit_core::chaos::InjectedFault;

#[derive(Debug, Classify)]
enum BrokerError {
    #[classify(chaos)]
    Injected(InjectedFault),
    #[classify(chaos)]
    AlsoInjected { fault: InjectedFault },
}

fn main() {}
