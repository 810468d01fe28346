// One object per thread, made on the thread's first call to get() and destroyed when the
// thread exits. Code that runs on the thread after that (the destructors of other thread_local
// objects, which may still free tensors) gets nullptr instead of a destroyed object.
#pragma once

namespace bp::detail {

template <typename T>
class PerThread {
 public:
  static T* get() {
    if (instance_) [[likely]]
      return instance_;
    return make();
  }
  // The calling thread's object if it has one already; never makes one.
  static T* existing() { return instance_; }

 private:
  struct Holder {
    T value;
    ~Holder() {
      instance_ = nullptr;
      exiting_ = true;
    }
  };

  [[gnu::noinline]] static T* make() {
    if (exiting_) return nullptr;
    thread_local Holder holder;
    instance_ = &holder.value;
    return instance_;
  }

  // Plain pointers, so that reading them costs no initialisation check.
  static inline thread_local T* instance_ = nullptr;
  static inline thread_local bool exiting_ = false;
};

}  // namespace bp::detail
