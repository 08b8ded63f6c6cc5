#include "airtime/slurm/submit_pool.h"

#include <utility>

namespace airtime::slurm {

SubmitPool::SubmitPool(SlurmClient* own, std::vector<std::unique_ptr<SlurmClient>> helpers)
    : own_(own), helpers_(std::move(helpers)) {
  threads_.reserve(helpers_.size());
  for (const auto& client : helpers_)
    threads_.emplace_back([this, c = client.get()] { HelperLoop(c); });
}

SubmitPool::~SubmitPool() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    ending_ = true;
  }
  work_cv_.notify_all();
  for (std::thread& t : threads_) t.join();
}

std::optional<size_t> SubmitPool::TakeNext(std::unique_lock<std::mutex>& lock) {
  (void)lock;  // held by the caller
  if (ending_ || batch_ == nullptr || next_ >= batch_->size()) return std::nullopt;
  return next_++;
}

void SubmitPool::Store(size_t i, Submitted result) {
  bool last = false;
  {
    std::lock_guard<std::mutex> lock(mu_);
    results_[i].emplace(std::move(result));
    last = --left_ == 0;
  }
  if (last) done_cv_.notify_all();
}

void SubmitPool::HelperLoop(SlurmClient* client) {
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    std::optional<size_t> i;
    work_cv_.wait(lock, [&] { return ending_ || (i = TakeNext(lock)).has_value(); });
    if (!i) return;                         // ending
    const JobRequest& job = (*batch_)[*i];  // the batch outlives every job handed out
    lock.unlock();
    auto id = client->Submit(job);
    Store(*i, Submitted{std::move(id), Clock::now()});
    lock.lock();
  }
}

std::vector<SubmitPool::Submitted> SubmitPool::SubmitAll(const std::vector<JobRequest>& jobs) {
  std::vector<Submitted> out;
  if (jobs.empty()) return out;
  std::unique_lock<std::mutex> lock(mu_);
  batch_ = &jobs;
  next_ = 0;
  left_ = jobs.size();
  results_.assign(jobs.size(), std::nullopt);
  // The helpers take what they can; the first job stays for this thread (TakeNext below),
  // unless a helper was quicker.
  if (jobs.size() > 1) work_cv_.notify_all();
  while (auto i = TakeNext(lock)) {
    lock.unlock();
    auto id = own_->Submit(jobs[*i]);
    Store(*i, Submitted{std::move(id), Clock::now()});
    lock.lock();
  }
  // Every job is handed out: wait for those under way on helpers.
  done_cv_.wait(lock, [&] { return left_ == 0; });
  batch_ = nullptr;
  out.reserve(jobs.size());
  for (auto& r : results_) out.push_back(std::move(*r));
  results_.clear();
  return out;
}

}  // namespace airtime::slurm
