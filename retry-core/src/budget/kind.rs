//! A budget's mode and scope, as the policy file names them.

/// How a [`RetryBudget`](crate::RetryBudget) decides: the policy file's
/// `mode` key.
///
/// ```
/// assert_eq!(retrykit_core::BudgetMode::Window.to_string(), "window");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum BudgetMode {
    /// Retries are a share of calls over a sliding window.
    Window,
    /// An adaptive limiter paces attempts (see [`RetryBudget::adaptive`](crate::RetryBudget::adaptive)).
    Adaptive,
    /// gRFC A6's retry throttling, a token bucket (see [`RetryBudget::grpc_throttling`](crate::RetryBudget::grpc_throttling)).
    GrpcThrottling,
}

/// Where a [`RetryBudget`](crate::RetryBudget) is kept: the policy file's
/// `scope` key.
///
/// ```
/// assert_eq!(retrykit_core::BudgetScope::Fleet.as_str(), "fleet");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum BudgetScope {
    /// In this process.
    Local,
    /// Shared by every process of the fleet, through Redis.
    Fleet,
}

impl BudgetMode {
    /// The mode as the policy file writes it.
    pub const fn as_str(self) -> &'static str {
        match self {
            BudgetMode::Window => "window",
            BudgetMode::Adaptive => "adaptive",
            BudgetMode::GrpcThrottling => "grpc_throttling",
        }
    }
}

impl BudgetScope {
    /// The scope as the policy file writes it.
    pub const fn as_str(self) -> &'static str {
        match self {
            BudgetScope::Local => "local",
            BudgetScope::Fleet => "fleet",
        }
    }
}

crate::problem::display_as_str!(BudgetMode, BudgetScope);
